//! The server's identity and its settings: one table that feeds the
//! ParameterStatus messages of a new connection, `SHOW`, `pg_settings` and
//! `current_setting()`, so they cannot disagree; and how a setting's value
//! is read and shown (PostgreSQL's Boolean and time spellings).
//!
//! Values are those of a PostgreSQL 15 from Debian in a UTC container, which
//! is what DuckDB's postgres_scanner and other clients are tested against.

use std::sync::Arc;
use std::time::Duration;

use crate::{SqlError, SqlState};

/// PostgreSQL's number of the UTF8 encoding, the only one RockLake's
/// databases use (`pg_database.encoding`, `pg_encoding_to_char`).
pub const UTF8_ENCODING: i32 = 6;

/// The PostgreSQL version RockLake speaks as (`server_version`).
pub const SERVER_VERSION: &str = "15.18";

/// [`SERVER_VERSION`] as a number (`server_version_num`).
pub const SERVER_VERSION_NUM: &str = "150018";

/// The `version()` string: postgres_scanner reads the number after
/// `PostgreSQL ` (and it must not mention Redshift).
pub fn version_string() -> String {
    format!(
        "PostgreSQL {SERVER_VERSION} (RockLake {}) on x86_64-pc-linux-gnu, compiled by rustc, 64-bit",
        env!("CARGO_PKG_VERSION")
    )
}

/// Where a setting's value comes from when a session has not set it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DefaultValue {
    /// A fixed value.
    Fixed(&'static str),
    /// The client's `application_name` startup parameter.
    ApplicationName,
    /// The user the client authenticated as.
    SessionUser,
    /// `on` when the server is a hot standby (a read replica), else `off`.
    HotStandby,
}

/// One server setting (a PostgreSQL GUC).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Setting {
    /// Name as PostgreSQL spells it (`DateStyle`, `TimeZone`, ...); lookups
    /// ignore case, as PostgreSQL's do.
    pub name: &'static str,
    /// Its value before a session sets it.
    pub default: DefaultValue,
    /// Whether a new connection is told its value in a ParameterStatus
    /// message (PostgreSQL's `GUC_REPORT` settings).
    pub reported: bool,
    /// What values it takes.
    pub kind: SettingKind,
}

/// The values a setting takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SettingKind {
    /// Any text, kept as given.
    Text,
    /// A time in milliseconds: set with a unit (`us`, `ms`, `s`, `min`, `h`,
    /// `d`) or without (milliseconds), shown in the largest unit that
    /// divides it (`1min`, `1500ms`), `0` for none.
    Milliseconds,
    /// A Boolean: set as PostgreSQL reads one (`on`, `true`, `yes`, `1`,
    /// unique prefixes, any case), shown `on` or `off`.
    Bool,
    /// One of these values (any case on input).
    Enum(&'static [&'static str]),
    /// A whole number.
    Integer,
    /// A time zone ([`crate::value::zone::SessionZone`]): a name of the
    /// time zone database or a POSIX offset, shown as the database spells
    /// it.
    TimeZone,
}

impl SettingKind {
    /// `pg_settings.vartype` and `pg_settings.unit` of a setting of this
    /// kind.
    pub fn vartype_and_unit(self) -> (&'static str, Option<&'static str>) {
        match self {
            SettingKind::Text | SettingKind::TimeZone => ("string", None),
            SettingKind::Milliseconds => ("integer", Some("ms")),
            SettingKind::Bool => ("bool", None),
            SettingKind::Enum(_) => ("enum", None),
            SettingKind::Integer => ("integer", None),
        }
    }
}

/// The isolation levels PostgreSQL names, in the order its error hint lists
/// them.
pub const ISOLATION_LEVELS: &[&str] = &[
    "serializable",
    "repeatable read",
    "read committed",
    "read uncommitted",
];

const fn isolation(name: &'static str) -> Setting {
    Setting {
        name,
        default: DefaultValue::Fixed("read committed"),
        reported: false,
        kind: SettingKind::Enum(ISOLATION_LEVELS),
    }
}

const fn boolean(name: &'static str, value: &'static str, reported: bool) -> Setting {
    Setting {
        name,
        default: DefaultValue::Fixed(value),
        reported,
        kind: SettingKind::Bool,
    }
}

const fn fixed(name: &'static str, value: &'static str, reported: bool) -> Setting {
    Setting {
        name,
        default: DefaultValue::Fixed(value),
        reported,
        kind: SettingKind::Text,
    }
}

/// A time setting, `0` (no limit) by default.
const fn milliseconds(name: &'static str) -> Setting {
    Setting {
        name,
        default: DefaultValue::Fixed("0"),
        reported: false,
        kind: SettingKind::Milliseconds,
    }
}

const fn integer(name: &'static str, value: &'static str) -> Setting {
    Setting {
        name,
        default: DefaultValue::Fixed(value),
        reported: false,
        kind: SettingKind::Integer,
    }
}

/// Every setting RockLake knows, in name order (case-insensitive).
pub const SETTINGS: &[Setting] = &[
    Setting {
        name: "application_name",
        default: DefaultValue::ApplicationName,
        reported: true,
        kind: SettingKind::Text,
    },
    boolean("array_nulls", "on", false),
    integer("block_size", "8192"),
    // Only PostgreSQL's default output format is produced.
    Setting {
        name: "bytea_output",
        default: DefaultValue::Fixed("hex"),
        reported: false,
        kind: SettingKind::Enum(&["hex"]),
    },
    fixed("client_encoding", "UTF8", true),
    boolean("data_checksums", "off", false),
    fixed("DateStyle", "ISO, MDY", true),
    // What clients read to tell a table's access method from the default.
    fixed("default_table_access_method", "heap", false),
    isolation("default_transaction_isolation"),
    boolean("default_transaction_read_only", "off", true),
    milliseconds("idle_in_transaction_session_timeout"),
    // What libpq's target_session_attrs reads to tell a replica (`on`) from
    // the writer (`off`).
    Setting {
        name: "in_hot_standby",
        default: DefaultValue::HotStandby,
        reported: true,
        kind: SettingKind::Text,
    },
    fixed("integer_datetimes", "on", true),
    fixed("IntervalStyle", "postgres", true),
    fixed("is_superuser", "on", true),
    // Accepted and shown; RockLake has no JIT compiler to turn on or off.
    fixed("jit", "on", false),
    // Sorting and comparing text is by bytes, PostgreSQL's "C" locale.
    fixed("lc_collate", "C", false),
    fixed("lc_ctype", "C", false),
    fixed("lc_messages", "C", false),
    fixed("lc_monetary", "C", false),
    fixed("lc_numeric", "C", false),
    fixed("lc_time", "C", false),
    // The server's `--max-sessions` (the engine sets it per session).
    integer("max_connections", "100"),
    fixed("max_identifier_length", "63", false),
    // PostgreSQL's compiled-in limit, which pgJDBC reads from pg_settings.
    fixed("max_index_keys", "32", false),
    // The role of SET ROLE (`none`: the session user); the session keeps it.
    fixed("role", "none", false),
    fixed("search_path", "\"$user\", public", false),
    fixed("server_encoding", "UTF8", true),
    fixed("server_version", SERVER_VERSION, true),
    fixed("server_version_num", SERVER_VERSION_NUM, false),
    Setting {
        name: "session_authorization",
        default: DefaultValue::SessionUser,
        reported: true,
        kind: SettingKind::Text,
    },
    fixed("standard_conforming_strings", "on", true),
    milliseconds("statement_timeout"),
    Setting {
        name: "TimeZone",
        default: DefaultValue::Fixed(crate::value::zone::DEFAULT_ZONE),
        reported: true,
        kind: SettingKind::TimeZone,
    },
    fixed("timezone_abbreviations", "Default", false),
    // The current transaction's (outside one: the defaults'); the session
    // answers these from its transaction.
    isolation("transaction_isolation"),
    boolean("transaction_read_only", "off", false),
];

/// Whether a client may give setting `name` at startup (as a startup
/// parameter or in `options`): the settings a session can change whose
/// values RockLake reads (time zone, timeouts, transaction defaults).
pub fn settable_at_startup(name: &str) -> bool {
    // The current transaction's own settings are not a session's.
    find(name).is_some_and(|s| {
        matches!(
            s.kind,
            SettingKind::TimeZone
                | SettingKind::Milliseconds
                | SettingKind::Bool
                | SettingKind::Enum(_)
        ) && !s.name.starts_with("transaction_")
    })
}

/// The setting named `name` (any case).
pub fn find(name: &str) -> Option<&'static Setting> {
    // A scan that rejects by length first: cheaper than hashing the name
    // for a table this size (sessions look settings up on every statement).
    SETTINGS.iter().find(|s| s.name.eq_ignore_ascii_case(name))
}

/// What a connection's defaults depend on.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SessionIdentity {
    /// The authenticated user.
    pub user: String,
    /// The client's `application_name`.
    pub application_name: String,
    /// Whether the server is a hot standby: a read replica, whose
    /// transactions are all read-only (`in_hot_standby`,
    /// `transaction_read_only`, `pg_is_in_recovery()`).
    pub hot_standby: bool,
}

impl Setting {
    /// The value before a session sets it.
    pub fn default_value(&self, identity: &SessionIdentity) -> String {
        match self.default {
            DefaultValue::Fixed(value) => value.to_string(),
            DefaultValue::ApplicationName => identity.application_name.clone(),
            DefaultValue::SessionUser => identity.user.clone(),
            DefaultValue::HotStandby => on_off(identity.hot_standby),
        }
    }
}

/// The `(name, value)` pairs a new connection is sent as ParameterStatus.
pub fn reported(identity: &SessionIdentity) -> impl Iterator<Item = (&'static str, String)> + '_ {
    SETTINGS
        .iter()
        .filter(|s| s.reported)
        .map(move |s| (s.name, s.default_value(identity)))
}

// Reading and showing setting values.

/// Every setting's (name, value), in name order, shared by the statements
/// that read them.
pub type SettingValues = Arc<Vec<(String, String)>>;

/// `on` or `off`, as PostgreSQL shows a Boolean setting.
pub fn on_off(value: bool) -> String {
    if value { "on" } else { "off" }.to_string()
}

/// `value` as the setting `name` shows it, or PostgreSQL's error for a
/// value it cannot take.
pub fn canonical_value(name: &str, value: &str) -> Result<String, SqlError> {
    match find(name).map(|s| s.kind) {
        Some(SettingKind::Milliseconds) => match parse_duration(value) {
            Some(duration) => Ok(format_milliseconds(duration)),
            None => Err(SqlError::new(
                SqlState::INVALID_PARAMETER_VALUE,
                format!("invalid value for parameter \"{name}\": \"{value}\""),
            )
            .with_hint(
                "Valid units for this parameter are \"us\", \"ms\", \"s\", \"min\", \"h\", and \"d\".",
            )),
        },
        Some(SettingKind::Bool) => parse_bool(value).map(on_off).ok_or_else(|| {
            SqlError::new(
                SqlState::INVALID_PARAMETER_VALUE,
                format!("parameter \"{name}\" requires a Boolean value"),
            )
        }),
        Some(SettingKind::Enum(values)) => {
            let wanted = value.trim();
            let Some(found) = values.iter().find(|v| v.eq_ignore_ascii_case(wanted)) else {
                return Err(SqlError::new(
                    SqlState::INVALID_PARAMETER_VALUE,
                    format!("invalid value for parameter \"{name}\": \"{value}\""),
                )
                .with_hint(format!("Available values: {}.", values.join(", "))));
            };
            if values == ISOLATION_LEVELS {
                check_isolation(found)?;
            }
            Ok(found.to_string())
        }
        Some(SettingKind::TimeZone) => crate::value::zone::SessionZone::parse(value)
            .map(|zone| zone.name().to_string())
            .ok_or_else(|| {
                SqlError::new(
                    SqlState::INVALID_PARAMETER_VALUE,
                    format!("invalid value for parameter \"TimeZone\": \"{value}\""),
                )
            }),
        _ => Ok(value.to_string()),
    }
}

/// Fails for the isolation levels RockLake cannot give: its transactions
/// read one snapshot and fail on write conflicts (snapshot isolation, what
/// PostgreSQL calls REPEATABLE READ), which does not prevent every
/// serialization anomaly (write skew), so SERIALIZABLE is `0A000` rather
/// than a weaker level under its name.
pub fn check_isolation(level: &str) -> Result<(), SqlError> {
    if level == "serializable" {
        return Err(SqlError::unsupported(
            "SERIALIZABLE isolation is not supported by RockLake: its transactions are snapshot \
             isolation (REPEATABLE READ), which does not prevent all serialization anomalies",
        )
        .with_hint("Use REPEATABLE READ."));
    }
    Ok(())
}

/// A Boolean as PostgreSQL reads one (`parse_bool`): `true`, `false`,
/// `yes`, `no` and their unique prefixes, `on`, `off`, `1`, `0`, any case.
pub fn parse_bool(value: &str) -> Option<bool> {
    let text = value.trim().to_ascii_lowercase();
    let prefix_of = |word: &str| !text.is_empty() && word.starts_with(text.as_str());
    match text.as_str() {
        "1" | "on" => Some(true),
        "0" | "of" | "off" => Some(false),
        _ if prefix_of("true") || prefix_of("yes") => Some(true),
        _ if prefix_of("false") || prefix_of("no") => Some(false),
        _ => None,
    }
}

/// A time setting as PostgreSQL shows it: whole milliseconds in the
/// largest unit that divides them (`1min`, `90s`, `1500ms`), `0` for none.
pub fn format_milliseconds(duration: Duration) -> String {
    let millis = duration.as_secs_f64() * 1000.0;
    let millis = millis.round() as u128;
    if millis == 0 {
        return "0".into();
    }
    const UNITS: [(u128, &str); 4] = [
        (86_400_000, "d"),
        (3_600_000, "h"),
        (60_000, "min"),
        (1_000, "s"),
    ];
    for (size, unit) in UNITS {
        if millis.is_multiple_of(size) {
            return format!("{}{unit}", millis / size);
        }
    }
    format!("{millis}ms")
}

/// A PostgreSQL time setting's value: a number with an optional unit (`us`,
/// `ms`, `s`, `min`, `h`, `d`); milliseconds without one.
pub fn parse_duration(value: &str) -> Option<Duration> {
    let text = value.trim().trim_matches('\'').trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: f64 = number.parse().ok()?;
    let millis = match unit.trim() {
        "" | "ms" => number,
        "us" => number / 1000.0,
        "s" => number * 1000.0,
        "min" => number * 60_000.0,
        "h" => number * 3_600_000.0,
        "d" => number * 86_400_000.0,
        _ => return None,
    };
    (millis.is_finite() && millis >= 0.0).then(|| Duration::from_micros((millis * 1000.0) as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_are_sorted_and_found_in_any_case() {
        let names: Vec<String> = SETTINGS.iter().map(|s| s.name.to_lowercase()).collect();
        let mut sorted = names.clone();
        sorted.sort();
        assert_eq!(names, sorted);
        assert_eq!(find("timezone").map(|s| s.name), Some("TimeZone"));
        assert_eq!(find("nope"), None);
    }

    #[test]
    fn a_connection_is_told_what_postgres_15_reports() {
        // The ParameterStatus list of a Debian PostgreSQL 15 in a UTC
        // container, in its order.
        let identity = SessionIdentity {
            user: "postgres".into(),
            application_name: String::new(),
            hot_standby: false,
        };
        let names: Vec<&str> = reported(&identity).map(|(n, _)| n).collect();
        assert_eq!(
            names,
            [
                "application_name",
                "client_encoding",
                "DateStyle",
                "default_transaction_read_only",
                "in_hot_standby",
                "integer_datetimes",
                "IntervalStyle",
                "is_superuser",
                "server_encoding",
                "server_version",
                "session_authorization",
                "standard_conforming_strings",
                "TimeZone",
            ]
        );
        assert!(reported(&identity).any(|p| p == ("TimeZone", "Etc/UTC".to_string())));
        assert!(reported(&identity).any(|p| p == ("in_hot_standby", "off".to_string())));
        let standby = SessionIdentity {
            hot_standby: true,
            ..identity.clone()
        };
        assert!(reported(&standby).any(|p| p == ("in_hot_standby", "on".to_string())));
        assert!(version_string().starts_with("PostgreSQL 15."));
    }
}
