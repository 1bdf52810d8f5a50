//! A session's settings and the statements that read and change them: `SET`,
//! `RESET`, `SHOW`. Defaults come from the server's one settings table
//! ([`rocklake_types::settings`]), which also feeds the ParameterStatus a
//! client gets at startup, `pg_settings` and `current_setting()`.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use rocklake_types::settings::{
    self, canonical_value, on_off, parse_duration, SessionIdentity, SettingValues,
};
use rocklake_types::value::zone::{set_session_zone, SessionZone};
use rocklake_types::{ColumnDef, Datum, PgType, QueryOutput, SqlError, SqlState};
use sqlparser::ast::{Expr, Ident, Reset, Set};

use crate::ident::fold;

/// How many [`SessionSettings::snapshot`]s of one generation a session keeps.
const KEPT_SNAPSHOTS: usize = 4;

/// The settings of one session: the server's defaults, overridden by what
/// the session set.
#[derive(Debug, Clone, Default)]
pub struct SessionSettings {
    identity: SessionIdentity,
    /// Defaults the server was started with (`--statement-timeout`, ...),
    /// by lower-case name: (name as spelled, value).
    defaults: BTreeMap<String, (String, String)>,
    /// Values the session set, by lower-case name: (name as spelled, value).
    changed: BTreeMap<String, (String, String)>,
    /// The current transaction's isolation level and read-only flag, which
    /// `transaction_isolation` and `transaction_read_only` show (outside a
    /// transaction: the defaults').
    transaction: Option<(String, bool)>,
    /// The values of the reported settings the client was last told
    /// (`None`: only those of its session start).
    reported: Option<BTreeMap<&'static str, String>>,
    /// Counts changes, so that copies of the values can tell they are old.
    generation: u64,
    /// [`Self::snapshot`]s by what they depend on: statements share them
    /// until a value changes.
    snapshots: Vec<(SnapshotKey, SettingValues)>,
    /// The generation the client was last told the reported values of:
    /// nothing to compare until the next change.
    reported_generation: Option<u64>,
    /// Counts changes of values other than the transaction's (which no
    /// reported setting shows).
    value_generation: u64,
    /// The `TimeZone` of the values of this generation.
    zone: Option<(u64, SessionZone)>,
    /// Inside a transaction block: the values as it began and those its
    /// COMMIT keeps.
    block: Option<BlockValues>,
}

/// The values a transaction block ends with: ROLLBACK goes back to
/// `at_start`; COMMIT keeps `at_commit`, which has what `SET` changed in
/// the block but not what `SET LOCAL` did.
#[derive(Debug, Clone)]
struct BlockValues {
    at_start: BTreeMap<String, (String, String)>,
    at_commit: BTreeMap<String, (String, String)>,
    /// Whether the block set anything (else its end changes nothing).
    set: bool,
}

/// What a settings snapshot depends on: the values set, and the current
/// transaction's isolation level and read-only flag.
type SnapshotKey = (u64, Option<(String, bool)>);

/// The setting that holds `transaction_isolation`'s value outside a
/// transaction, and `transaction_read_only`'s.
const TRANSACTION_DEFAULTS: [(&str, &str); 2] = [
    ("transaction_isolation", "default_transaction_isolation"),
    ("transaction_read_only", "default_transaction_read_only"),
];

impl SessionSettings {
    /// Sets who the session belongs to (defaults of `session_authorization`
    /// and `application_name`).
    pub fn set_identity(&mut self, identity: SessionIdentity) {
        self.identity = identity;
        self.changed_values();
    }

    /// Sets the value of `name` before the session changes it (and after
    /// `RESET`).
    pub fn set_default(&mut self, name: &str, value: &str) -> Result<(), SqlError> {
        let spelled = settings::find(name)
            .map(|s| s.name.to_string())
            .unwrap_or_else(|| name.to_lowercase());
        let value = canonical_value(name, value)?;
        self.defaults.insert(name.to_lowercase(), (spelled, value));
        self.changed_values();
        Ok(())
    }

    /// A time setting (`statement_timeout`, ...) as a duration; `None` when
    /// it is 0 (no limit), unset or unreadable. Numbers without a unit are
    /// milliseconds, as in PostgreSQL.
    pub fn duration(&self, name: &str) -> Option<Duration> {
        let (_, value) = self.get(name)?;
        parse_duration(&value).filter(|d| !d.is_zero())
    }

    /// `(name as PostgreSQL spells it, value)` of the setting `name` (any
    /// case); `None` for a setting nobody set that the server does not know.
    pub fn get(&self, name: &str) -> Option<(String, String)> {
        let lowered;
        let key = if name.bytes().any(|b| b.is_ascii_uppercase()) {
            lowered = name.to_ascii_lowercase();
            lowered.as_str()
        } else {
            name
        };
        if key == "transaction_read_only" && self.identity.hot_standby {
            // Every transaction of a hot standby is read-only.
            return Some(("transaction_read_only".to_string(), on_off(true)));
        }
        if let Some((current, default)) = TRANSACTION_DEFAULTS.iter().find(|(n, _)| *n == key) {
            let value = match &self.transaction {
                Some((level, _)) if key == "transaction_isolation" => level.clone(),
                Some((_, read_only)) => on_off(*read_only),
                None => self.get(default)?.1,
            };
            return Some((current.to_string(), value));
        }
        if let Some(value) = self.changed.get(key).or_else(|| self.defaults.get(key)) {
            return Some(value.clone());
        }
        settings::find(key).map(|s| (s.name.to_string(), s.default_value(&self.identity)))
    }

    /// Every setting, known or set, in name order, shared until a value
    /// changes. The values outside a transaction and those of the last
    /// transaction's characteristics are both kept, so that a session
    /// alternating between them (every DuckDB commit) builds neither again.
    pub fn snapshot(&mut self) -> SettingValues {
        let key = (self.value_generation, self.transaction.clone());
        if let Some((_, all)) = self.snapshots.iter().find(|(k, _)| *k == key) {
            return all.clone();
        }
        let all = Arc::new(self.all());
        // Values of older generations are gone for good; of this one, the
        // few transaction characteristics a session alternates between stay
        // (DuckDB: outside a transaction, its REPEATABLE READ blocks, the
        // implicit transactions of single statements).
        self.snapshots.retain(|(k, _)| k.0 == key.0);
        if self.snapshots.len() >= KEPT_SNAPSHOTS {
            self.snapshots.remove(0);
        }
        self.snapshots.push((key, all.clone()));
        all
    }

    /// Every setting, known or set, in name order.
    pub fn all(&self) -> Vec<(String, String)> {
        let mut map: BTreeMap<String, (String, String)> = settings::SETTINGS
            .iter()
            .map(|s| {
                (
                    s.name.to_lowercase(),
                    (s.name.to_string(), s.default_value(&self.identity)),
                )
            })
            .collect();
        for (key, value) in self.defaults.iter().chain(&self.changed) {
            map.insert(key.clone(), value.clone());
        }
        for (name, _) in TRANSACTION_DEFAULTS {
            if let Some(value) = self.get(name) {
                map.insert(name.to_string(), value);
            }
        }
        map.into_values().collect()
    }

    /// The reported settings whose values changed since the client was
    /// last told them (at first: since its session start), with their
    /// values, for ParameterStatus messages.
    pub fn take_reported_changes(&mut self) -> Vec<(String, String)> {
        if self.reported_generation == Some(self.value_generation) {
            return Vec::new();
        }
        self.reported_generation = Some(self.value_generation);
        let identity = &self.identity;
        let told = self
            .reported
            .take()
            .unwrap_or_else(|| settings::reported(identity).collect());
        let mut told = told;
        let mut changes = Vec::new();
        for setting in settings::SETTINGS.iter().filter(|s| s.reported) {
            let Some((_, value)) = self.get(setting.name) else {
                continue;
            };
            if told.get(setting.name) != Some(&value) {
                changes.push((setting.name.to_string(), value.clone()));
                told.insert(setting.name, value);
            }
        }
        self.reported = Some(told);
        changes
    }

    /// Sets the current transaction's isolation level and read-only flag
    /// (`None` outside a transaction).
    pub fn set_transaction(&mut self, transaction: Option<(String, bool)>) {
        if self.transaction != transaction {
            self.transaction = transaction;
            self.generation += 1;
        }
        // No reported setting depends on the transaction: the reported
        // values stay as they were.
    }

    /// A value may have changed (not only the transaction's).
    fn changed_values(&mut self) {
        self.generation += 1;
        self.value_generation += 1;
        if let Some(block) = &mut self.block {
            block.set = true;
        }
    }

    /// Makes the session's `TimeZone` the one of the thread that runs it
    /// (see [`rocklake_types::value::zone`]), before a statement.
    pub fn install_time_zone(&mut self) {
        let zone = match &self.zone {
            Some((generation, zone)) if *generation == self.value_generation => zone.clone(),
            _ => {
                let zone = self
                    .get("TimeZone")
                    .and_then(|(_, value)| SessionZone::parse(&value))
                    .unwrap_or_else(SessionZone::utc);
                self.zone = Some((self.value_generation, zone.clone()));
                zone
            }
        };
        set_session_zone(zone);
    }

    /// A number that changes whenever a value may have.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The isolation level and read-only flag a transaction starts with.
    pub fn transaction_defaults(&self) -> (String, bool) {
        let level = self
            .get("default_transaction_isolation")
            .map(|(_, v)| v)
            .unwrap_or_else(|| "read committed".into());
        let read_only = self
            .get("default_transaction_read_only")
            .is_some_and(|(_, v)| v == "on");
        (level, read_only)
    }

    /// Sets `name` for the rest of the session (in a transaction block:
    /// unless it rolls back); `DEFAULT` restores the default. A value the
    /// setting cannot take fails with `22023`.
    pub fn set(&mut self, name: &str, value: String) -> Result<(), SqlError> {
        let entry = self.entry(name, value)?;
        let key = name.to_lowercase();
        for values in self.session_values() {
            match &entry {
                Some(entry) => values.insert(key.clone(), entry.clone()),
                None => values.remove(&key),
            };
        }
        Ok(())
    }

    /// `SET LOCAL`: sets `name` until the transaction block ends; `false`
    /// (nothing set) outside one.
    pub fn set_local(&mut self, name: &str, value: String) -> Result<bool, SqlError> {
        if self.block.is_none() {
            return Ok(false);
        }
        let entry = self.entry(name, value)?;
        let key = name.to_lowercase();
        match entry {
            Some(entry) => self.changed.insert(key, entry),
            None => self.changed.remove(&key),
        };
        Ok(true)
    }

    /// The value `name` is set to (`None`: its default), checked.
    fn entry(&mut self, name: &str, value: String) -> Result<Option<(String, String)>, SqlError> {
        check_settable(name)?;
        self.changed_values();
        if value.eq_ignore_ascii_case("default") {
            return Ok(None);
        }
        let value = canonical_value(name, &value)?;
        let spelled = self
            .get(name)
            .map(|(n, _)| n)
            .unwrap_or_else(|| name.to_lowercase());
        Ok(Some((spelled, value)))
    }

    /// The values a session-wide change goes to: the current ones, and in
    /// a transaction block those its COMMIT keeps.
    fn session_values(&mut self) -> Vec<&mut BTreeMap<String, (String, String)>> {
        let mut out = vec![&mut self.changed];
        if let Some(block) = &mut self.block {
            out.push(&mut block.at_commit);
        }
        out
    }

    /// `RESET name`.
    pub fn reset(&mut self, name: &str) {
        self.changed_values();
        let key = name.to_lowercase();
        for values in self.session_values() {
            values.remove(&key);
        }
    }

    /// `RESET ALL` / `DISCARD ALL`. With nothing set it changes nothing, so
    /// the values stay shared: DuckDB sends `DISCARD ALL` after every
    /// transaction, and building them again was 2% of a commit's server CPU.
    pub fn reset_all(&mut self) {
        if self.session_values().iter().all(|values| values.is_empty()) {
            return;
        }
        self.changed_values();
        for values in self.session_values() {
            values.clear();
        }
    }

    /// A transaction block begins: what it sets is undone if it rolls back.
    pub fn begin_block(&mut self) {
        if self.block.is_none() {
            self.block = Some(BlockValues {
                at_start: self.changed.clone(),
                at_commit: self.changed.clone(),
                set: false,
            });
        }
    }

    /// The transaction block ends: committed, its `SET`s stay and its `SET
    /// LOCAL`s go; rolled back, every change of the block goes.
    pub fn end_block(&mut self, committed: bool) {
        if let Some(block) = self.block.take().filter(|block| block.set) {
            self.changed = if committed {
                block.at_commit
            } else {
                block.at_start
            };
            self.changed_values();
        }
    }
}

/// Who the session is changes through the role checks (`SET ROLE`, `SET
/// SESSION AUTHORIZATION`), never as a plain setting.
fn check_settable(name: &str) -> Result<(), SqlError> {
    match name.to_ascii_lowercase().as_str() {
        "role" | "session_authorization" => Err(SqlError::unsupported(format!(
            "SET {name} = ... and set_config('{name}', ...): use SET ROLE or SET SESSION AUTHORIZATION"
        ))),
        // What the server is: a client cannot make a replica look like the
        // writer.
        "is_superuser" | "in_hot_standby" => Err(SqlError::new(
            SqlState::CANT_CHANGE_RUNTIME_PARAM,
            format!("parameter \"{name}\" cannot be changed"),
        )),
        _ => Ok(()),
    }
}

/// `SET [LOCAL] name = value`, `SET name TO value`, `SET [LOCAL] TIME ZONE
/// zone`; `SET LOCAL` outside a transaction block warns and changes
/// nothing, as in PostgreSQL.
pub fn set(settings: &mut SessionSettings, statement: &Set) -> Result<QueryOutput, SqlError> {
    let local = match statement {
        Set::SingleAssignment { scope, .. } => {
            matches!(scope, Some(sqlparser::ast::ContextModifier::Local))
        }
        Set::SetTimeZone { local, .. } => *local,
        _ => false,
    };
    let Some((name, value)) = assignment(statement) else {
        return Err(SqlError::unsupported(format!("{statement}")));
    };
    if !local {
        settings.set(&name, value)?;
        return Ok(QueryOutput::command("SET"));
    }
    if settings.set_local(&name, value)? {
        return Ok(QueryOutput::command("SET"));
    }
    Ok(QueryOutput::Command {
        tag: "SET".into(),
        notices: vec![rocklake_types::output::Notice {
            code: SqlState::NO_ACTIVE_SQL_TRANSACTION,
            message: "SET LOCAL can only be used in transaction blocks".into(),
        }],
    })
}

/// The name and value of `SET name = value` / `SET name TO value` / `SET
/// TIME ZONE zone`.
pub fn assignment(statement: &Set) -> Option<(String, String)> {
    let (variable, values) = match statement {
        Set::SingleAssignment {
            variable, values, ..
        } => (variable, values),
        Set::SetTimeZone { value, .. } => {
            return Some(("TimeZone".to_string(), time_zone_value(value)));
        }
        _ => return None,
    };
    let name = variable
        .0
        .iter()
        .map(|p| p.to_string())
        .collect::<Vec<_>>()
        .join(".");
    let value = values
        .iter()
        .map(|v| match v {
            Expr::Value(x) => x
                .value
                .clone()
                .into_string()
                .unwrap_or_else(|| x.to_string()),
            other => other.to_string(),
        })
        .collect::<Vec<_>>()
        .join(", ");
    Some((name, value))
}

/// The `TimeZone` value `SET TIME ZONE value` sets: a zone's name, the
/// default for `LOCAL` and `DEFAULT`, and for a number of hours east
/// PostgreSQL's POSIX spelling (`-7` is `<-07>+07`).
fn time_zone_value(value: &Expr) -> String {
    let text = match value {
        Expr::Value(v) => v
            .value
            .clone()
            .into_string()
            .unwrap_or_else(|| v.to_string()),
        other => other.to_string(),
    };
    if text.eq_ignore_ascii_case("local") || text.eq_ignore_ascii_case("default") {
        return "default".to_string();
    }
    let Ok(hours) = text.trim().parse::<f64>() else {
        return text;
    };
    let east = (hours * 3600.0).round() as i32;
    let (h, m) = (east.abs() / 3600, east.abs() / 60 % 60);
    let (sign, posix) = if east < 0 { ('-', '+') } else { ('+', '-') };
    let clock = if m == 0 {
        format!("{h:02}")
    } else {
        format!("{h:02}:{m:02}")
    };
    format!("<{sign}{clock}>{posix}{clock}")
}

/// `RESET name` / `RESET ALL`.
pub fn reset(settings: &mut SessionSettings, statement: &Reset) -> QueryOutput {
    match statement {
        Reset::ALL => settings.reset_all(),
        Reset::ConfigurationParameter(p) => settings.reset(
            &p.0.iter()
                .map(|part| part.to_string())
                .collect::<Vec<_>>()
                .join("."),
        ),
        _ => {}
    }
    QueryOutput::command("RESET")
}

/// `SHOW name` / `SHOW ALL`, with PostgreSQL's column names.
pub fn show(settings: &SessionSettings, variable: &[Ident]) -> Result<QueryOutput, SqlError> {
    let words = variable.iter().map(fold).collect::<Vec<_>>().join(" ");
    // The SQL-standard spellings PostgreSQL's SHOW accepts.
    let name = match words.as_str() {
        "transaction isolation level" => "transaction_isolation".to_string(),
        "time zone" => "timezone".to_string(),
        "session authorization" => "session_authorization".to_string(),
        _ => words,
    };
    if name == "all" {
        let rows = settings
            .all()
            .into_iter()
            .map(|(n, v)| vec![Datum::text(n), Datum::text(v), Datum::text(String::new())])
            .collect::<Vec<_>>();
        let columns = ["name", "setting", "description"]
            .iter()
            .map(|c| ColumnDef::new(*c, PgType::Text))
            .collect();
        return Ok(QueryOutput::Returning {
            columns,
            rows: rows.into(),
            tag: "SHOW".into(),
        });
    }
    let (spelled, value) = settings.get(&name).ok_or_else(|| {
        SqlError::new(
            SqlState::UNDEFINED_OBJECT,
            format!("unrecognized configuration parameter \"{name}\""),
        )
    })?;
    Ok(QueryOutput::Returning {
        columns: vec![ColumnDef::new(spelled.to_lowercase(), PgType::Text)],
        rows: vec![vec![Datum::text(value)]].into(),
        tag: "SHOW".into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zone_of(settings: &SessionSettings) -> String {
        settings.get("TimeZone").unwrap().1
    }

    #[test]
    fn blocks_undo_their_settings_as_postgres_does() {
        let mut settings = SessionSettings::default();
        settings.set("timezone", "asia/tokyo".into()).unwrap();
        assert_eq!(zone_of(&settings), "Asia/Tokyo");
        // Rolled back: the block's SET goes.
        settings.begin_block();
        settings.set("TimeZone", "Europe/Berlin".into()).unwrap();
        settings.end_block(false);
        assert_eq!(zone_of(&settings), "Asia/Tokyo");
        // Committed: SET stays, SET LOCAL goes.
        settings.begin_block();
        settings.set("TimeZone", "Europe/Berlin".into()).unwrap();
        assert!(settings.set_local("TimeZone", "UTC".into()).unwrap());
        assert_eq!(zone_of(&settings), "UTC");
        settings.end_block(true);
        assert_eq!(zone_of(&settings), "Europe/Berlin");
        // Outside a block SET LOCAL changes nothing.
        assert!(!settings.set_local("TimeZone", "UTC".into()).unwrap());
        assert_eq!(zone_of(&settings), "Europe/Berlin");
        let e = settings.set("TimeZone", "Mars/Olympus".into()).unwrap_err();
        assert_eq!(
            e.message,
            "invalid value for parameter \"TimeZone\": \"Mars/Olympus\""
        );
    }

    #[test]
    fn values_are_built_again_only_when_they_change() {
        let mut settings = SessionSettings::default();
        let repeatable = Some(("repeatable read".to_string(), false));
        let committed = Some(("read committed".to_string(), false));
        let first = settings.snapshot();
        // DuckDB's round: its block, an implicit transaction, DISCARD ALL.
        for _ in 0..3 {
            for transaction in [repeatable.clone(), None, committed.clone(), None] {
                settings.set_transaction(transaction);
                settings.snapshot();
            }
            settings.reset_all();
        }
        assert!(
            Arc::ptr_eq(&first, &settings.snapshot()),
            "shared, not built again"
        );
        settings.set("DateStyle", "ISO, MDY".into()).unwrap();
        let changed = settings.snapshot();
        assert!(!Arc::ptr_eq(&first, &changed));
        settings.reset_all();
        assert!(
            !Arc::ptr_eq(&changed, &settings.snapshot()),
            "RESET ALL changed a value"
        );
    }

    #[test]
    fn set_time_zone_spells_hours_as_postgres_does() {
        let value = |sql: &str| {
            let statement = crate::parse::parse(sql).unwrap().remove(0);
            let sqlparser::ast::Statement::Set(set) = statement else {
                panic!("{sql}")
            };
            assignment(&set).unwrap()
        };
        assert_eq!(value("SET TIME ZONE -7").1, "<-07>+07");
        assert_eq!(value("SET TIME ZONE 5.5").1, "<+05:30>-05:30");
        assert_eq!(value("SET TIME ZONE LOCAL").1, "default");
        assert_eq!(
            value("SET TIME ZONE 'Europe/Paris'"),
            ("TimeZone".into(), "Europe/Paris".into())
        );
    }

    #[test]
    fn time_settings_read_like_postgres() {
        assert_eq!(parse_duration("1500"), Some(Duration::from_millis(1500)));
        assert_eq!(parse_duration("2s"), Some(Duration::from_secs(2)));
        assert_eq!(parse_duration(" 1min "), Some(Duration::from_secs(60)));
        assert_eq!(parse_duration("'250ms'"), Some(Duration::from_millis(250)));
        assert_eq!(parse_duration("0"), Some(Duration::ZERO));
        assert_eq!(parse_duration("soon"), None);
        let mut settings = SessionSettings::default();
        settings.set_default("statement_timeout", "5s").unwrap();
        assert_eq!(
            settings.duration("statement_timeout"),
            Some(Duration::from_secs(5))
        );
        settings.set("statement_timeout", "0".into()).unwrap();
        assert_eq!(settings.duration("statement_timeout"), None);
        settings.reset("statement_timeout");
        assert_eq!(
            settings.duration("STATEMENT_TIMEOUT"),
            Some(Duration::from_secs(5))
        );
    }

    #[test]
    fn changed_reported_settings_are_told_once() {
        let mut settings = SessionSettings::default();
        settings.set_identity(SessionIdentity {
            user: "postgres".into(),
            application_name: "app".into(),
            hot_standby: false,
        });
        assert!(settings.take_reported_changes().is_empty());
        settings
            .set("default_transaction_read_only", "yes".into())
            .unwrap();
        settings.set("statement_timeout", "1s".into()).unwrap();
        assert_eq!(
            settings.take_reported_changes(),
            vec![(
                "default_transaction_read_only".to_string(),
                "on".to_string()
            )]
        );
        assert!(settings.take_reported_changes().is_empty());
        settings.reset_all();
        assert_eq!(
            settings.take_reported_changes(),
            vec![(
                "default_transaction_read_only".to_string(),
                "off".to_string()
            )]
        );
    }

    #[test]
    fn time_settings_show_like_postgres() {
        let mut settings = SessionSettings::default();
        for (set, shown) in [
            ("60s", "1min"),
            ("1500", "1500ms"),
            ("1.5s", "1500ms"),
            ("2000", "2s"),
            ("0", "0"),
            ("3600000", "1h"),
            ("2d", "2d"),
            ("90s", "90s"),
        ] {
            settings.set("statement_timeout", set.into()).unwrap();
            assert_eq!(settings.get("statement_timeout").unwrap().1, shown, "{set}");
        }
        let error = settings
            .set("statement_timeout", "soon".into())
            .unwrap_err();
        assert_eq!(error.code, SqlState::INVALID_PARAMETER_VALUE);
        assert_eq!(
            error.message,
            "invalid value for parameter \"statement_timeout\": \"soon\""
        );
        assert_eq!(settings.get("statement_timeout").unwrap().1, "90s");
        settings.set("application_name", "anything".into()).unwrap();
    }
}
