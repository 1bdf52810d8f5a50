//! `COPY`: the options of a COPY statement. The stream formats themselves
//! are codecs in [`rocklake_types::copy`].

use rocklake_types::copy::text::TextCopyFormat;
use rocklake_types::SqlError;
use sqlparser::ast::{CopyLegacyOption, CopyOption};

/// The format of a COPY: `Ok(None)` for binary, the text format's options for
/// text, 0A000 for anything else (CSV, unsupported options).
pub(crate) fn text_format(
    options: &[CopyOption],
    legacy: &[CopyLegacyOption],
) -> Result<Option<TextCopyFormat>, SqlError> {
    let mut binary = false;
    let mut text = TextCopyFormat::default();
    for o in options {
        match o {
            CopyOption::Format(f) if f.value.eq_ignore_ascii_case("binary") => binary = true,
            CopyOption::Format(f) if f.value.eq_ignore_ascii_case("text") => {}
            CopyOption::Null(n) => text.null = n.clone(),
            CopyOption::Delimiter(d) if d.is_ascii() => text.delimiter = *d as u8,
            other => {
                return Err(SqlError::unsupported(format!(
                    "COPY option {other} is not supported"
                )))
            }
        }
    }
    for o in legacy {
        match o {
            CopyLegacyOption::Binary => binary = true,
            CopyLegacyOption::Null(n) => text.null = n.clone(),
            CopyLegacyOption::Delimiter(d) if d.is_ascii() => text.delimiter = *d as u8,
            other => {
                return Err(SqlError::unsupported(format!(
                    "COPY option {other} is not supported"
                )))
            }
        }
    }
    Ok(if binary { None } else { Some(text) })
}
