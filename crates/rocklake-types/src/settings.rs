//! The server's identity and its settings: one table that feeds the
//! ParameterStatus messages of a new connection, `SHOW`, `pg_settings` and
//! `current_setting()`, so they cannot disagree.
//!
//! Values are those of a PostgreSQL 15 from Debian in a UTC container, which
//! is what DuckDB's postgres_scanner and other clients are tested against.

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

/// Every setting RockLake knows, in name order (case-insensitive).
pub const SETTINGS: &[Setting] = &[
    Setting {
        name: "application_name",
        default: DefaultValue::ApplicationName,
        reported: true,
        kind: SettingKind::Text,
    },
    fixed("client_encoding", "UTF8", true),
    fixed("DateStyle", "ISO, MDY", true),
    isolation("default_transaction_isolation"),
    boolean("default_transaction_read_only", "off", true),
    milliseconds("idle_in_transaction_session_timeout"),
    fixed("in_hot_standby", "off", true),
    fixed("integer_datetimes", "on", true),
    fixed("IntervalStyle", "postgres", true),
    fixed("is_superuser", "on", true),
    // Accepted and shown; RockLake has no JIT compiler to turn on or off.
    fixed("jit", "on", false),
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
    fixed("TimeZone", "Etc/UTC", true),
    // The current transaction's (outside one: the defaults'); the session
    // answers these from its transaction.
    isolation("transaction_isolation"),
    boolean("transaction_read_only", "off", false),
];

/// The setting named `name` (any case).
pub fn find(name: &str) -> Option<&'static Setting> {
    SETTINGS.iter().find(|s| s.name.eq_ignore_ascii_case(name))
}

/// What a connection's defaults depend on.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SessionIdentity {
    /// The authenticated user.
    pub user: String,
    /// The client's `application_name`.
    pub application_name: String,
}

impl Setting {
    /// The value before a session sets it.
    pub fn default_value(&self, identity: &SessionIdentity) -> String {
        match self.default {
            DefaultValue::Fixed(value) => value.to_string(),
            DefaultValue::ApplicationName => identity.application_name.clone(),
            DefaultValue::SessionUser => identity.user.clone(),
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
        assert!(version_string().starts_with("PostgreSQL 15."));
    }
}
