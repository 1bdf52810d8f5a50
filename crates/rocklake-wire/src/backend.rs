//! Encoding of the messages the server sends, into an output buffer. Fixed
//! messages go through `pgwire::messages`; DataRow and CopyData payloads are
//! framed in place here so rows are encoded once, straight into the buffer.

use bytes::{BufMut, BytesMut};
use pgwire::messages::data::{FieldDescription, NoData, ParameterDescription, RowDescription};
use pgwire::messages::response::{
    CommandComplete, EmptyQueryResponse, ErrorResponse, NoticeResponse, ReadyForQuery,
    TransactionStatus,
};
use pgwire::messages::Message;
use rocklake_types::datum::{ColumnDef, Datum, PgType};
use rocklake_types::notify::Notification;
use rocklake_types::output::{Notice, TxStatus};
use rocklake_types::SqlError;

use rocklake_types::value::binary as binary_value;
use rocklake_types::value::text as text_format;

/// Text format code.
pub const FORMAT_TEXT: i16 = 0;
/// Binary format code.
pub const FORMAT_BINARY: i16 = 1;

/// Severity of an ErrorResponse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    /// The statement failed; the connection goes on.
    Error,
    /// The connection is closed after this message.
    Fatal,
}

/// Encodes any pgwire message, turning pgwire's size-limit error into an
/// internal SQL error.
pub fn put<M: Message>(buf: &mut BytesMut, message: &M) -> Result<(), SqlError> {
    message
        .encode(buf)
        .map_err(|e| SqlError::internal(format!("cannot encode a protocol message: {e}")))
}

/// Writes a ParameterStatus: a reported setting's new value.
pub fn put_parameter_status(buf: &mut BytesMut, name: &str, value: &str) {
    let _ = put(
        buf,
        &pgwire::messages::startup::ParameterStatus::new(name.to_string(), value.to_string()),
    );
}

/// Writes a NotificationResponse (LISTEN/NOTIFY).
pub fn put_notification(buf: &mut BytesMut, notification: &Notification) {
    let _ = put(
        buf,
        &pgwire::messages::response::NotificationResponse::new(
            notification.pid,
            notification.channel.clone(),
            notification.payload.clone(),
        ),
    );
}

/// Writes ReadyForQuery with the session's transaction state.
pub fn put_ready(buf: &mut BytesMut, status: TxStatus) {
    let status = match status {
        TxStatus::Idle => TransactionStatus::Idle,
        TxStatus::InBlock => TransactionStatus::Transaction,
        TxStatus::Failed => TransactionStatus::Error,
    };
    // ReadyForQuery is 6 bytes and cannot fail to encode.
    let _ = put(buf, &ReadyForQuery::new(status));
}

/// Writes an ErrorResponse carrying every field of `error`.
pub fn put_error(buf: &mut BytesMut, error: &SqlError, severity: Severity) {
    rocklake_metrics::metrics().error(&error.code.to_string());
    let severity = match severity {
        Severity::Error => "ERROR",
        Severity::Fatal => "FATAL",
    };
    let mut fields = vec![
        (b'S', severity.to_string()),
        (b'V', severity.to_string()),
        (b'C', error.code.to_string()),
        (b'M', error.message.clone()),
    ];
    let optional = [
        (b'D', &error.detail),
        (b'H', &error.hint),
        (b's', &error.schema),
        (b't', &error.table),
        (b'n', &error.constraint),
    ];
    for (code, value) in optional {
        if let Some(value) = value {
            fields.push((code, value.clone()));
        }
    }
    for (_, value) in &mut fields {
        // A NUL would end the field early and desynchronise the client.
        if value.contains('\0') {
            *value = value.replace('\0', "\\0");
        }
    }
    // ErrorResponse has no practical size limit in pgwire.
    let _ = put(buf, &ErrorResponse::new(fields));
}

/// Writes a NoticeResponse: severity WARNING for the classes PostgreSQL
/// warns with (`01` warnings, `25` transaction states such as "there is no
/// transaction in progress"), NOTICE otherwise.
pub fn put_notice(buf: &mut BytesMut, notice: &Notice) {
    let code = notice.code.to_string();
    let severity = if code.starts_with("01") || code.starts_with("25") {
        "WARNING"
    } else {
        "NOTICE"
    };
    let fields = vec![
        (b'S', severity.to_string()),
        (b'V', severity.to_string()),
        (b'C', code),
        (b'M', notice.message.replace('\0', "\\0")),
    ];
    let _ = put(buf, &NoticeResponse::new(fields));
}

/// Writes CommandComplete.
pub fn put_command_complete(buf: &mut BytesMut, tag: &str) -> Result<(), SqlError> {
    rocklake_metrics::metrics().statement(tag);
    put(buf, &CommandComplete::new(tag.to_string()))
}

/// Writes one CopyData message holding `data`.
pub fn put_copy_data(buf: &mut BytesMut, data: &[u8]) {
    let at = begin_frame(buf, b'd');
    buf.extend_from_slice(data);
    let _ = end_frame(buf, at);
}

/// Writes PortalSuspended: an Execute's row limit was reached.
pub fn put_portal_suspended(buf: &mut BytesMut) {
    let at = begin_frame(buf, b's');
    let _ = end_frame(buf, at);
}

/// Writes EmptyQueryResponse.
pub fn put_empty_query(buf: &mut BytesMut) {
    let _ = put(buf, &EmptyQueryResponse::new());
}

/// `pg_type.typlen` of a type: its fixed size, -1 for variable length,
/// -2 for `unknown` (a C string).
pub fn type_size(ty: &PgType) -> i16 {
    match ty {
        PgType::Unknown => -2,
        PgType::Void => 4,
        PgType::Bool | PgType::Char => 1,
        PgType::Int2 => 2,
        PgType::Int4
        | PgType::Float4
        | PgType::Oid
        | PgType::RegProc
        | PgType::RegClass
        | PgType::RegType
        | PgType::RegNamespace
        | PgType::Xid
        | PgType::Date => 4,
        PgType::Tid => 6,
        PgType::Int8 | PgType::Float8 | PgType::Time | PgType::Timestamp | PgType::TimestampTz => 8,
        PgType::TimeTz => 12,
        PgType::Interval | PgType::Uuid => 16,
        PgType::Name => 64,
        PgType::Bytea
        | PgType::Inet
        | PgType::Text
        | PgType::Varchar
        | PgType::Numeric(_)
        | PgType::Json
        | PgType::Jsonb
        | PgType::AclItem
        | PgType::Int2Vector
        | PgType::OidVector
        | PgType::Array(_)
        | PgType::Record(_) => -1,
    }
}

/// Writes RowDescription for `columns`, each with the format code from
/// `formats` (same length as `columns`).
pub fn put_row_description(
    buf: &mut BytesMut,
    columns: &[ColumnDef],
    formats: &[i16],
) -> Result<(), SqlError> {
    let fields = columns
        .iter()
        .zip(formats)
        .map(|(column, format)| {
            let (table, number) = column.table_column.unwrap_or((0, 0));
            FieldDescription::new(
                column.name.clone(),
                table as i32,
                number,
                column.pg_type.oid(),
                type_size(&column.pg_type),
                column.pg_type.type_modifier(),
                *format,
            )
        })
        .collect();
    put(buf, &RowDescription::new(fields))
}

/// Writes ParameterDescription.
pub fn put_parameter_description(buf: &mut BytesMut, types: &[u32]) -> Result<(), SqlError> {
    put(buf, &ParameterDescription::new(types.to_vec()))
}

/// Writes NoData.
pub fn put_no_data(buf: &mut BytesMut) {
    let _ = put(buf, &NoData::new());
}

/// Starts a message of type `kind` whose body is written next; returns the
/// position of its length word for [`end_frame`].
pub fn begin_frame(buf: &mut BytesMut, kind: u8) -> usize {
    buf.put_u8(kind);
    let at = buf.len();
    buf.put_i32(0);
    at
}

/// Patches the length word of a message started with [`begin_frame`].
pub fn end_frame(buf: &mut BytesMut, at: usize) -> Result<(), SqlError> {
    let len = i32::try_from(buf.len() - at)
        .map_err(|_| SqlError::internal("protocol message larger than 2 GiB"))?;
    buf[at..at + 4].copy_from_slice(&len.to_be_bytes());
    Ok(())
}

/// Writes a DataRow of `row`, each value in the format from `formats` (text
/// output, or the binary representation of the column's type). On error the
/// buffer is left as it was.
pub fn put_data_row<'a, R>(
    buf: &mut BytesMut,
    columns: &[ColumnDef],
    formats: &[i16],
    row: R,
) -> Result<(), SqlError>
where
    R: IntoIterator<Item = &'a Datum>,
    R::IntoIter: ExactSizeIterator,
{
    let row = row.into_iter();
    if row.len() != columns.len() || formats.len() != columns.len() {
        return Err(SqlError::internal(format!(
            "result row has {} values and {} format codes for {} columns",
            row.len(),
            formats.len(),
            columns.len()
        )));
    }
    let start = buf.len();
    let result = (|| {
        let at = begin_frame(buf, b'D');
        buf.put_i16(row.len() as i16);
        for ((column, format), datum) in columns.iter().zip(formats).zip(row) {
            if datum.is_null() {
                buf.put_i32(-1);
                continue;
            }
            let len_at = buf.len();
            buf.put_i32(0);
            if *format == FORMAT_BINARY {
                binary_value::put_value(buf, &column.pg_type, datum).map_err(|e| {
                    let detail = format!("result column \"{}\"", column.name);
                    e.with_detail(detail)
                })?;
            } else {
                text_format::put_text(datum, buf);
            }
            let len = (buf.len() - len_at - 4) as i32;
            buf[len_at..len_at + 4].copy_from_slice(&len.to_be_bytes());
        }
        end_frame(buf, at)
    })();
    if result.is_err() {
        buf.truncate(start);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_response_carries_all_fields() {
        let error = SqlError::unique_violation("public", "ducklake_snapshot", "snapshot_id", "13");
        let mut buf = BytesMut::new();
        put_error(&mut buf, &error, Severity::Error);
        let body = &buf[5..];
        let text = String::from_utf8_lossy(body);
        for expected in [
            "SERROR\0",
            "VERROR\0",
            "C23505\0",
            "Mduplicate key value violates unique constraint \"ducklake_snapshot_pkey\"\0",
            "DKey (snapshot_id)=(13) already exists.\0",
            "spublic\0",
            "tducklake_snapshot\0",
            "nducklake_snapshot_pkey\0",
        ] {
            assert!(text.contains(expected), "missing {expected:?} in {text:?}");
        }
        assert_eq!(buf[0], b'E');
        assert_eq!(*buf.last().unwrap(), 0);
    }

    #[test]
    fn data_row_text_and_binary() {
        let columns = vec![
            ColumnDef::new("a", PgType::Int4),
            ColumnDef::new("b", PgType::Bool),
        ];
        let mut buf = BytesMut::new();
        put_data_row(
            &mut buf,
            &columns,
            &[0, 1],
            &[Datum::Int4(42), Datum::Bool(true)],
        )
        .unwrap();
        assert_eq!(
            &buf[..],
            &[b'D', 0, 0, 0, 17, 0, 2, 0, 0, 0, 2, b'4', b'2', 0, 0, 0, 1, 1][..]
        );
        // A failing row leaves nothing behind.
        let before = buf.len();
        let err = put_data_row(
            &mut buf,
            &columns,
            &[1, 1],
            &[Datum::Text("x".into()), Datum::Null],
        );
        assert!(err.is_err());
        assert_eq!(buf.len(), before);
    }
}
