//! [`SqlState`]: PostgreSQL's five-character error codes, the one table of
//! every SQLSTATE RockLake raises (named as in PostgreSQL's `errcodes.txt`).
//! Product code names a code through this table, never as a literal.

use std::fmt;

/// A PostgreSQL SQLSTATE, e.g. [`SqlState::UNIQUE_VIOLATION`] (`23505`).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct SqlState(&'static str);

impl SqlState {
    /// The five characters of the code.
    pub const fn as_str(self) -> &'static str {
        self.0
    }

    /// The code's class: its first two characters (`23` for integrity
    /// constraint violations).
    pub fn class(self) -> &'static str {
        &self.0[..2]
    }
}

macro_rules! sqlstates {
    ($($(#[$doc:meta])* $name:ident = $code:literal;)*) => {
        impl SqlState {
            $($(#[$doc])* pub const $name: SqlState = SqlState($code);)*

            /// Every code of the table (for tests and documentation).
            pub const ALL: &'static [SqlState] = &[$(SqlState::$name),*];
        }
    };
}

sqlstates! {
    /// `00000 successful_completion` (notices that are not warnings).
    SUCCESSFUL_COMPLETION = "00000";
    /// `01000 warning`.
    WARNING = "01000";
    /// `08006 connection_failure`.
    CONNECTION_FAILURE = "08006";
    /// `08P01 protocol_violation`: the client broke the wire protocol.
    PROTOCOL_VIOLATION = "08P01";
    /// `0LP01 invalid_grant_operation`: a role membership that would loop.
    INVALID_GRANT_OPERATION = "0LP01";
    /// `0A000 feature_not_supported`: valid SQL RockLake does not implement.
    FEATURE_NOT_SUPPORTED = "0A000";
    /// `21000 cardinality_violation` (a scalar subquery returned several rows).
    CARDINALITY_VIOLATION = "21000";
    /// `22003 numeric_value_out_of_range`.
    NUMERIC_VALUE_OUT_OF_RANGE = "22003";
    /// `22007 invalid_datetime_format`.
    INVALID_DATETIME_FORMAT = "22007";
    /// `22008 datetime_field_overflow`.
    DATETIME_FIELD_OVERFLOW = "22008";
    /// `22009 invalid_time_zone_displacement_value`.
    INVALID_TIME_ZONE_DISPLACEMENT_VALUE = "22009";
    /// `2202E array_subscript_error`.
    ARRAY_SUBSCRIPT_ERROR = "2202E";
    /// `22011 substring_error`.
    SUBSTRING_ERROR = "22011";
    /// `22012 division_by_zero`.
    DIVISION_BY_ZERO = "22012";
    /// `22013 invalid_preceding_or_following_size` (a negative window
    /// frame offset).
    INVALID_PRECEDING_OR_FOLLOWING_SIZE = "22013";
    /// `22021 character_not_in_repertoire` (bytes that are not UTF-8).
    CHARACTER_NOT_IN_REPERTOIRE = "22021";
    /// `2201F invalid_argument_for_power_function`.
    INVALID_ARGUMENT_FOR_POWER_FUNCTION = "2201F";
    /// `2201E invalid_argument_for_logarithm`.
    INVALID_ARGUMENT_FOR_LOGARITHM = "2201E";
    /// `22015 interval_field_overflow`.
    INTERVAL_FIELD_OVERFLOW = "22015";
    /// `22023 invalid_parameter_value`.
    INVALID_PARAMETER_VALUE = "22023";
    /// `2201W invalid_row_count_in_limit_clause`.
    INVALID_ROW_COUNT_IN_LIMIT_CLAUSE = "2201W";
    /// `22014 invalid_argument_for_ntile_function`.
    INVALID_ARGUMENT_FOR_NTILE = "22014";
    /// `22016 invalid_argument_for_nth_value_function`.
    INVALID_ARGUMENT_FOR_NTH_VALUE = "22016";
    /// `2201X invalid_row_count_in_result_offset_clause`.
    INVALID_ROW_COUNT_IN_RESULT_OFFSET_CLAUSE = "2201X";
    /// `22004 null_value_not_allowed`.
    NULL_VALUE_NOT_ALLOWED = "22004";
    /// `2200C invalid_use_of_escape_character`.
    INVALID_USE_OF_ESCAPE_CHARACTER = "2200C";
    /// `22025 invalid_escape_sequence`.
    INVALID_ESCAPE_SEQUENCE = "22025";
    /// `2201B invalid_regular_expression`.
    INVALID_REGULAR_EXPRESSION = "2201B";
    /// `22P02 invalid_text_representation`: bad text input for a type.
    INVALID_TEXT_REPRESENTATION = "22P02";
    /// `22P05 untranslatable_character`.
    UNTRANSLATABLE_CHARACTER = "22P05";
    /// `22P03 invalid_binary_representation`: bad binary input for a type.
    INVALID_BINARY_REPRESENTATION = "22P03";
    /// `22P04 bad_copy_file_format`.
    BAD_COPY_FILE_FORMAT = "22P04";
    /// `23502 not_null_violation`.
    NOT_NULL_VIOLATION = "23502";
    /// `23505 unique_violation` (DuckLake retries a commit on it).
    UNIQUE_VIOLATION = "23505";
    /// `25001 active_sql_transaction`: the statement cannot run in a block.
    ACTIVE_SQL_TRANSACTION = "25001";
    /// `25006 read_only_sql_transaction`: a write in a read-only transaction.
    READ_ONLY_SQL_TRANSACTION = "25006";
    /// `25P01 no_active_sql_transaction`.
    NO_ACTIVE_SQL_TRANSACTION = "25P01";
    /// `25P02 in_failed_sql_transaction`: commands ignored until the block ends.
    IN_FAILED_SQL_TRANSACTION = "25P02";
    /// `25P03 idle_in_transaction_session_timeout`.
    IDLE_IN_TRANSACTION_SESSION_TIMEOUT = "25P03";
    /// `26000 invalid_sql_statement_name`: an unknown prepared statement.
    INVALID_SQL_STATEMENT_NAME = "26000";
    /// `28000 invalid_authorization_specification`.
    INVALID_AUTHORIZATION_SPECIFICATION = "28000";
    /// `28P01 invalid_password`.
    INVALID_PASSWORD = "28P01";
    /// `34000 invalid_cursor_name`: an unknown portal.
    INVALID_CURSOR_NAME = "34000";
    /// `3D000 invalid_catalog_name`: an unknown database.
    INVALID_CATALOG_NAME = "3D000";
    /// `3F000 invalid_schema_name`: an unknown schema.
    INVALID_SCHEMA_NAME = "3F000";
    /// `40001 serialization_failure`: a concurrent commit conflicted.
    SERIALIZATION_FAILURE = "40001";
    /// `3B001 invalid_savepoint_specification`: no savepoint of that name.
    INVALID_SAVEPOINT_SPECIFICATION = "3B001";
    /// `40P01 deadlock_detected`: transactions waited for each other.
    DEADLOCK_DETECTED = "40P01";
    /// `42501 insufficient_privilege`.
    INSUFFICIENT_PRIVILEGE = "42501";
    /// `42601 syntax_error`.
    SYNTAX_ERROR = "42601";
    /// `42602 invalid_name`: a name that cannot be one (empty, too long).
    INVALID_NAME = "42602";
    /// `42622 name_too_long`: the notice for an identifier cut to 63 bytes.
    NAME_TOO_LONG = "42622";
    /// `42939 reserved_name`: a role name PostgreSQL keeps for itself.
    RESERVED_NAME = "42939";
    /// `42701 duplicate_column`.
    DUPLICATE_COLUMN = "42701";
    /// `42702 ambiguous_column`.
    AMBIGUOUS_COLUMN = "42702";
    /// `42703 undefined_column`.
    UNDEFINED_COLUMN = "42703";
    /// `42704 undefined_object` (unknown type, setting, ...).
    UNDEFINED_OBJECT = "42704";
    /// `42710 duplicate_object`.
    DUPLICATE_OBJECT = "42710";
    /// `42803 grouping_error`.
    GROUPING_ERROR = "42803";
    /// `42846 cannot_coerce`.
    CANNOT_COERCE = "42846";
    /// `42804 datatype_mismatch`.
    DATATYPE_MISMATCH = "42804";
    /// `42809 wrong_object_type`.
    WRONG_OBJECT_TYPE = "42809";
    /// `42883 undefined_function` (also unknown operators).
    UNDEFINED_FUNCTION = "42883";
    /// `42725 ambiguous_function` (also operators that are not unique).
    AMBIGUOUS_FUNCTION = "42725";
    /// `42P20 windowing_error`: a window function where none is allowed.
    WINDOWING_ERROR = "42P20";
    /// `42P01 undefined_table`.
    UNDEFINED_TABLE = "42P01";
    /// `42P02 undefined_parameter`: a `$n` without a value.
    UNDEFINED_PARAMETER = "42P02";
    /// `42P05 duplicate_prepared_statement`.
    DUPLICATE_PREPARED_STATEMENT = "42P05";
    /// `42P06 duplicate_schema`.
    DUPLICATE_SCHEMA = "42P06";
    /// `42P04 duplicate_database`.
    DUPLICATE_DATABASE = "42P04";
    /// `2BP01 dependent_objects_still_exist`: a DROP without CASCADE.
    DEPENDENT_OBJECTS_STILL_EXIST = "2BP01";
    /// `55000 object_not_in_prerequisite_state`: e.g. expiring a tagged
    /// snapshot.
    OBJECT_NOT_IN_PREREQUISITE_STATE = "55000";
    /// `55006 object_in_use`: e.g. a database with sessions on it.
    OBJECT_IN_USE = "55006";
    /// `55P02 cant_change_runtime_param`.
    CANT_CHANGE_RUNTIME_PARAM = "55P02";
    /// `55P03 lock_not_available`: a row lock `NOWAIT` could not take.
    LOCK_NOT_AVAILABLE = "55P03";
    /// `42P07 duplicate_table`.
    DUPLICATE_TABLE = "42P07";
    /// `42P10 invalid_column_reference`.
    INVALID_COLUMN_REFERENCE = "42P10";
    /// `42P16 invalid_table_definition`.
    INVALID_TABLE_DEFINITION = "42P16";
    /// `42P19 invalid_recursion`.
    INVALID_RECURSION = "42P19";
    /// `42P18 indeterminate_datatype`.
    INDETERMINATE_DATATYPE = "42P18";
    /// `53100 disk_full`: storage has no room for a write.
    DISK_FULL = "53100";
    /// `53200 out_of_memory`: a statement went over its memory limit.
    OUT_OF_MEMORY = "53200";
    /// `53300 too_many_connections`.
    TOO_MANY_CONNECTIONS = "53300";
    /// `54000 program_limit_exceeded` (statement or message too large).
    PROGRAM_LIMIT_EXCEEDED = "54000";
    /// `54023 too_many_arguments`: more than 100 arguments to a function.
    TOO_MANY_ARGUMENTS = "54023";
    /// `54001 statement_too_complex` ("stack depth limit exceeded").
    STATEMENT_TOO_COMPLEX = "54001";
    /// `57014 query_canceled` (cancel request or statement timeout).
    QUERY_CANCELED = "57014";
    /// `57P01 admin_shutdown` (server shutdown, or this writer was fenced).
    ADMIN_SHUTDOWN = "57P01";
    /// `58030 io_error`: storage failed.
    IO_ERROR = "58030";
    /// `72000 snapshot_too_old`: below the retention floor.
    SNAPSHOT_TOO_OLD = "72000";
    /// `XX000 internal_error`.
    INTERNAL_ERROR = "XX000";
    /// `XX001 data_corrupted`.
    DATA_CORRUPTED = "XX001";
}

impl fmt::Display for SqlState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

impl fmt::Debug for SqlState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SqlState({})", self.0)
    }
}

impl PartialEq<str> for SqlState {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for SqlState {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

impl PartialEq<SqlState> for &str {
    fn eq(&self, other: &SqlState) -> bool {
        *self == other.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_five_characters_and_unique() {
        let mut seen = std::collections::HashSet::new();
        for state in SqlState::ALL {
            assert_eq!(state.as_str().len(), 5, "{state}");
            assert!(
                state
                    .as_str()
                    .bytes()
                    .all(|b| b.is_ascii_digit() || b.is_ascii_uppercase()),
                "{state}"
            );
            assert!(seen.insert(state.as_str()), "{state} listed twice");
        }
        assert_eq!(SqlState::UNIQUE_VIOLATION, "23505");
        assert_eq!(SqlState::UNIQUE_VIOLATION.class(), "23");
    }
}
