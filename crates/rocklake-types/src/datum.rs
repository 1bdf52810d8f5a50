//! SQL values and PostgreSQL types as RockLake exchanges them between layers.
//!
//! A [`Datum`] is one cell of a row; a [`PgType`] says how a column is typed on the
//! PostgreSQL wire (its OID) and how its cells are stored. Every layer (store, SQL
//! engine, wire server) speaks in these two types.

use std::fmt;
use std::sync::Arc;

/// Microseconds between 1970-01-01 and 2000-01-01, the PostgreSQL epoch.
pub const PG_EPOCH_OFFSET_MICROS: i64 = 946_684_800_000_000;

/// `time` as a `timestamptz` value: microseconds since 2000-01-01 UTC (times
/// before 1970 count as 1970).
pub fn timestamptz_micros(time: std::time::SystemTime) -> i64 {
    let unix = time
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_micros() as i64)
        .unwrap_or(0);
    unix - PG_EPOCH_OFFSET_MICROS
}

/// A PostgreSQL column type, identified on the wire by its OID.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum PgType {
    /// `boolean` (OID 16).
    Bool,
    /// `bytea` (OID 17).
    Bytea,
    /// `"char"`, the single-byte internal type (OID 18).
    Char,
    /// `name` (OID 19).
    Name,
    /// `bigint` (OID 20).
    Int8,
    /// `smallint` (OID 21).
    Int2,
    /// `integer` (OID 23).
    Int4,
    /// `text` (OID 25).
    Text,
    /// `oid` (OID 26).
    Oid,
    /// `tid`, a tuple identifier (OID 27).
    Tid,
    /// `real` (OID 700).
    Float4,
    /// `double precision` (OID 701).
    Float8,
    /// `varchar` / `character varying` (OID 1043).
    Varchar,
    /// `date` (OID 1082).
    Date,
    /// `time without time zone` (OID 1083).
    Time,
    /// `timestamp without time zone` (OID 1114).
    Timestamp,
    /// `timestamp with time zone` (OID 1184).
    TimestampTz,
    /// `interval` (OID 1186).
    Interval,
    /// `time with time zone` (OID 1266).
    TimeTz,
    /// `numeric(precision, scale)` (OID 1700); `None` means unconstrained.
    Numeric(Option<(u16, u16)>),
    /// `uuid` (OID 2950).
    Uuid,
    /// `inet`: an IPv4 or IPv6 host address (with its netmask length when it
    /// is not the whole address), held as its text.
    Inet,
    /// `xid`: a 32-bit transaction id.
    Xid,
    /// `void` (OID 2278): what a function that returns nothing returns
    /// (`pg_sleep`), an empty text.
    Void,
    /// `unknown` (OID 705): an untyped literal kept as written, as a
    /// field of `ROW('a')` is; held as [`Datum::Text`].
    Unknown,
    /// `regproc` (OID 24): a function's oid, shown as its name.
    RegProc,
    /// `regclass` (OID 2205).
    RegClass,
    /// `regtype` (OID 2206): a type's oid, shown as its name.
    RegType,
    /// `regnamespace` (OID 4089): a schema's oid, shown as its name.
    RegNamespace,
    /// `json` (OID 114), kept as its text.
    Json,
    /// `jsonb` (OID 3802), held as [`Datum::Jsonb`].
    Jsonb,
    /// `aclitem` (OID 1033), an access privilege, kept as its text
    /// (`grantee=privileges/grantor`).
    AclItem,
    /// `int2vector` (OID 22): `pg_index.indkey`; 0-based, printed space-separated.
    Int2Vector,
    /// `oidvector` (OID 30): `pg_index.indclass`, like [`PgType::Int2Vector`].
    OidVector,
    /// A one-dimensional array of the element type (`smallint[]`, `text[]`, ...),
    /// whose OID is the element's `typarray`.
    Array(Box<PgType>),
    /// A row value of these fields (name, type): PostgreSQL's anonymous
    /// `record` (OID 2249), as a function returning `SETOF record` with
    /// output parameters gives it.
    Record(Arc<[(String, PgType)]>),
}

impl PgType {
    /// The type's OID as sent in RowDescription and COPY headers.
    pub fn oid(&self) -> u32 {
        match self {
            PgType::Bool => 16,
            PgType::Bytea => 17,
            PgType::Char => 18,
            PgType::Name => 19,
            PgType::Int8 => 20,
            PgType::Int2 => 21,
            PgType::Int4 => 23,
            PgType::Text => 25,
            PgType::Oid => 26,
            PgType::Tid => 27,
            PgType::Float4 => 700,
            PgType::Float8 => 701,
            PgType::Varchar => 1043,
            PgType::Date => 1082,
            PgType::Time => 1083,
            PgType::Timestamp => 1114,
            PgType::TimestampTz => 1184,
            PgType::Interval => 1186,
            PgType::TimeTz => 1266,
            PgType::Numeric(_) => 1700,
            PgType::Uuid => 2950,
            PgType::Inet => 869,
            PgType::Xid => 28,
            PgType::Unknown => 705,
            PgType::Void => 2278,
            PgType::RegProc => 24,
            PgType::RegClass => 2205,
            PgType::RegType => 2206,
            PgType::RegNamespace => 4089,
            PgType::Json => 114,
            PgType::Jsonb => 3802,
            PgType::AclItem => 1033,
            PgType::Int2Vector => 22,
            PgType::OidVector => 30,
            PgType::Array(element) => element.array_oid(),
            PgType::Record(_) => 2249,
        }
    }

    /// `smallint[]`, `text[]`, ...: the array type of `element`.
    pub fn array_of(element: PgType) -> PgType {
        PgType::Array(Box::new(element))
    }

    /// The element type of an array or vector type.
    pub fn element_type(&self) -> Option<PgType> {
        match self {
            PgType::Array(element) => Some((**element).clone()),
            PgType::Int2Vector => Some(PgType::Int2),
            PgType::OidVector => Some(PgType::Oid),
            _ => None,
        }
    }

    /// Whether values of this type are arrays (arrays and vectors).
    pub fn is_array(&self) -> bool {
        self.element_type().is_some()
    }

    /// Every type RockLake has (`numeric` unconstrained), in the order
    /// `pg_type` lists them.
    pub const ALL: [PgType; 32] = [
        PgType::Bool,
        PgType::Bytea,
        PgType::Char,
        PgType::Name,
        PgType::Int8,
        PgType::Int2,
        PgType::Int2Vector,
        PgType::Int4,
        PgType::RegProc,
        PgType::RegClass,
        PgType::RegType,
        PgType::RegNamespace,
        PgType::Text,
        PgType::Oid,
        PgType::Tid,
        PgType::OidVector,
        PgType::Json,
        PgType::Jsonb,
        PgType::AclItem,
        PgType::Float4,
        PgType::Float8,
        PgType::Varchar,
        PgType::Date,
        PgType::Time,
        PgType::Timestamp,
        PgType::TimestampTz,
        PgType::Interval,
        PgType::TimeTz,
        PgType::Numeric(None),
        PgType::Uuid,
        PgType::Inet,
        PgType::Xid,
    ];

    /// The type with this OID, if RockLake has it (`numeric` unconstrained;
    /// the array types of [`PgType::ALL`] too).
    pub fn from_oid(oid: u32) -> Option<PgType> {
        PgType::ALL
            .into_iter()
            .find(|t| t.oid() == oid)
            .or_else(|| {
                PgType::ALL
                    .into_iter()
                    .find(|t| t.array_oid() == oid)
                    .map(PgType::array_of)
            })
    }

    /// The OID of PostgreSQL's array type of this type (`pg_type.typarray`;
    /// 0 for an array type).
    pub fn array_oid(&self) -> u32 {
        match self {
            PgType::Bool => 1000,
            PgType::Bytea => 1001,
            PgType::Char => 1002,
            PgType::Name => 1003,
            PgType::Int8 => 1016,
            PgType::Int2 => 1005,
            PgType::Int4 => 1007,
            PgType::Text => 1009,
            PgType::Oid => 1028,
            PgType::Tid => 1010,
            PgType::Float4 => 1021,
            PgType::Float8 => 1022,
            PgType::Varchar => 1015,
            PgType::Date => 1182,
            PgType::Time => 1183,
            PgType::Timestamp => 1115,
            PgType::TimestampTz => 1185,
            PgType::Interval => 1187,
            PgType::TimeTz => 1270,
            PgType::Numeric(_) => 1231,
            PgType::Uuid => 2951,
            PgType::Inet => 1041,
            PgType::Xid => 1011,
            PgType::Unknown | PgType::Void => 0,
            PgType::RegProc => 1008,
            PgType::RegClass => 2210,
            PgType::RegType => 2211,
            PgType::RegNamespace => 4090,
            PgType::Json => 199,
            PgType::Jsonb => 3807,
            PgType::AclItem => 1034,
            PgType::Int2Vector => 1006,
            PgType::OidVector => 1013,
            PgType::Array(_) => 0,
            PgType::Record(_) => 2287,
        }
    }

    /// The `pg_type.typname` of this type.
    pub fn type_name(&self) -> &'static str {
        match self {
            PgType::Bool => "bool",
            PgType::Bytea => "bytea",
            PgType::Char => "char",
            PgType::Name => "name",
            PgType::Int8 => "int8",
            PgType::Int2 => "int2",
            PgType::Int4 => "int4",
            PgType::Text => "text",
            PgType::Oid => "oid",
            PgType::Tid => "tid",
            PgType::Float4 => "float4",
            PgType::Float8 => "float8",
            PgType::Varchar => "varchar",
            PgType::Date => "date",
            PgType::Time => "time",
            PgType::Timestamp => "timestamp",
            PgType::TimestampTz => "timestamptz",
            PgType::Interval => "interval",
            PgType::TimeTz => "timetz",
            PgType::Numeric(_) => "numeric",
            PgType::Uuid => "uuid",
            PgType::Inet => "inet",
            PgType::Xid => "xid",
            PgType::Unknown => "unknown",
            PgType::Void => "void",
            PgType::RegProc => "regproc",
            PgType::RegClass => "regclass",
            PgType::RegType => "regtype",
            PgType::RegNamespace => "regnamespace",
            PgType::Json => "json",
            PgType::Jsonb => "jsonb",
            PgType::AclItem => "aclitem",
            PgType::Int2Vector => "int2vector",
            PgType::OidVector => "oidvector",
            PgType::Array(element) => array_type_name(element),
            PgType::Record(_) => "record",
        }
    }

    /// The name PostgreSQL uses for this type in messages (`bigint`,
    /// `timestamp with time zone`, ...), as `format_type` prints it.
    pub fn display_name(&self) -> &'static str {
        match self {
            PgType::Bool => "boolean",
            PgType::Int2 => "smallint",
            PgType::Int4 => "integer",
            PgType::Int8 => "bigint",
            PgType::Float4 => "real",
            PgType::Float8 => "double precision",
            PgType::Varchar => "character varying",
            PgType::Timestamp => "timestamp without time zone",
            PgType::TimestampTz => "timestamp with time zone",
            PgType::Time => "time without time zone",
            PgType::TimeTz => "time with time zone",
            PgType::Char => "\"char\"",
            PgType::Array(element) => array_display_name(element),
            other => other.type_name(),
        }
    }

    /// Whether this is an object-identifier alias (`regclass`, `regtype`,
    /// `regnamespace`), stored and compared as an `oid`.
    pub fn is_reg(&self) -> bool {
        matches!(
            self,
            PgType::RegProc | PgType::RegClass | PgType::RegType | PgType::RegNamespace
        )
    }

    /// Whether this is an integer, floating-point or `numeric` type.
    pub fn is_numeric(&self) -> bool {
        matches!(
            self,
            PgType::Int2
                | PgType::Int4
                | PgType::Int8
                | PgType::Oid
                | PgType::Float4
                | PgType::Float8
                | PgType::Numeric(_)
        )
    }

    /// Whether values of this type are held as their text ([`Datum::Text`]).
    pub fn is_textual(&self) -> bool {
        self.is_string()
            || matches!(
                self,
                PgType::Json | PgType::AclItem | PgType::Unknown | PgType::Void
            )
    }

    /// Whether this is a string type (`text`, `varchar`, `name`, `"char"`).
    pub fn is_string(&self) -> bool {
        matches!(
            self,
            PgType::Text | PgType::Varchar | PgType::Name | PgType::Char
        )
    }

    /// The `pg_attribute.atttypmod` PostgreSQL reports for a column of this type.
    pub fn type_modifier(&self) -> i32 {
        match self {
            PgType::Numeric(Some((precision, scale))) => {
                ((i32::from(*precision) << 16) | i32::from(*scale)) + 4
            }
            _ => -1,
        }
    }

    /// Parses a type name as written in `CREATE TABLE` (case-insensitive), e.g.
    /// `BIGINT`, `TIMESTAMP WITH TIME ZONE`, `DECIMAL(18,3)`. Returns `None` for a
    /// type RockLake does not store.
    pub fn from_sql_name(name: &str) -> Option<PgType> {
        let lowered = name.trim().to_ascii_lowercase();
        let collapsed: String = lowered.split_whitespace().collect::<Vec<_>>().join(" ");
        if let Some(element) = collapsed.strip_suffix("[]") {
            let element = PgType::from_sql_name(element)?;
            return (!element.is_array()).then(|| PgType::array_of(element));
        }
        if let Some(args) = collapsed
            .strip_prefix("decimal")
            .or_else(|| collapsed.strip_prefix("numeric"))
        {
            let args = args.trim();
            if args.is_empty() {
                return Some(PgType::Numeric(None));
            }
            let inner = args.strip_prefix('(')?.strip_suffix(')')?;
            let mut parts = inner.split(',').map(|p| p.trim().parse::<u16>());
            let precision = parts.next()?.ok()?;
            let scale = match parts.next() {
                Some(s) => s.ok()?,
                None => 0,
            };
            return Some(PgType::Numeric(Some((precision, scale))));
        }
        Some(match collapsed.as_str() {
            "bool" | "boolean" => PgType::Bool,
            "bytea" | "blob" => PgType::Bytea,
            "\"char\"" | "char" => PgType::Char,
            "name" => PgType::Name,
            "int8" | "bigint" => PgType::Int8,
            "int2" | "smallint" => PgType::Int2,
            "int4" | "int" | "integer" => PgType::Int4,
            "text" => PgType::Text,
            "oid" => PgType::Oid,
            "tid" => PgType::Tid,
            "float4" | "real" => PgType::Float4,
            "float8" | "double precision" | "double" => PgType::Float8,
            "varchar" | "character varying" | "string" => PgType::Varchar,
            "date" => PgType::Date,
            "time" | "time without time zone" => PgType::Time,
            "timestamp" | "timestamp without time zone" => PgType::Timestamp,
            "timestamptz" | "timestamp with time zone" => PgType::TimestampTz,
            "interval" => PgType::Interval,
            "timetz" | "time with time zone" => PgType::TimeTz,
            "uuid" => PgType::Uuid,
            "inet" => PgType::Inet,
            "xid" => PgType::Xid,
            "regproc" => PgType::RegProc,
            "regclass" => PgType::RegClass,
            "regtype" => PgType::RegType,
            "regnamespace" => PgType::RegNamespace,
            "json" => PgType::Json,
            "jsonb" => PgType::Jsonb,
            "aclitem" => PgType::AclItem,
            "int2vector" => PgType::Int2Vector,
            "oidvector" => PgType::OidVector,
            array => {
                let element = PgType::from_sql_name(array.strip_prefix('_')?)?;
                if element.is_array() {
                    return None;
                }
                return Some(PgType::array_of(element));
            }
        })
    }

    /// The SQL spelling of this type, suitable for `CREATE TABLE`.
    pub fn sql_name(&self) -> String {
        match self {
            PgType::Numeric(Some((p, s))) => format!("NUMERIC({p},{s})"),
            PgType::Numeric(None) => "NUMERIC".to_string(),
            PgType::Int8 => "BIGINT".to_string(),
            PgType::Int4 => "INTEGER".to_string(),
            PgType::Int2 => "SMALLINT".to_string(),
            PgType::Float4 => "REAL".to_string(),
            PgType::Float8 => "DOUBLE PRECISION".to_string(),
            PgType::Bool => "BOOLEAN".to_string(),
            PgType::Varchar => "VARCHAR".to_string(),
            PgType::TimestampTz => "TIMESTAMP WITH TIME ZONE".to_string(),
            PgType::TimeTz => "TIME WITH TIME ZONE".to_string(),
            PgType::Array(element) => format!("{}[]", element.sql_name()),
            other => other.type_name().to_ascii_uppercase(),
        }
    }
}

/// `pg_type.typname` of the array type of `element` (`_int4`, ...).
fn array_type_name(element: &PgType) -> &'static str {
    match element {
        PgType::Bool => "_bool",
        PgType::Bytea => "_bytea",
        PgType::Char => "_char",
        PgType::Name => "_name",
        PgType::Int8 => "_int8",
        PgType::Int2 => "_int2",
        PgType::Int4 => "_int4",
        PgType::Text => "_text",
        PgType::Oid => "_oid",
        PgType::Tid => "_tid",
        PgType::Float4 => "_float4",
        PgType::Float8 => "_float8",
        PgType::Varchar => "_varchar",
        PgType::Date => "_date",
        PgType::Time => "_time",
        PgType::Timestamp => "_timestamp",
        PgType::TimestampTz => "_timestamptz",
        PgType::Interval => "_interval",
        PgType::TimeTz => "_timetz",
        PgType::Numeric(_) => "_numeric",
        PgType::Uuid => "_uuid",
        PgType::Inet => "_inet",
        PgType::Xid => "_xid",
        PgType::Unknown => "_unknown",
        PgType::Void => "_void",
        PgType::RegProc => "_regproc",
        PgType::RegClass => "_regclass",
        PgType::RegType => "_regtype",
        PgType::RegNamespace => "_regnamespace",
        PgType::Json => "_json",
        PgType::Jsonb => "_jsonb",
        PgType::AclItem => "_aclitem",
        PgType::Int2Vector => "_int2vector",
        PgType::OidVector => "_oidvector",
        PgType::Array(_) => "_array",
        PgType::Record(_) => "_record",
    }
}

/// The `format_type` name of the array type of `element` (`integer[]`, ...).
fn array_display_name(element: &PgType) -> &'static str {
    match element {
        PgType::Bool => "boolean[]",
        PgType::Bytea => "bytea[]",
        PgType::Char => "\"char\"[]",
        PgType::Name => "name[]",
        PgType::Int8 => "bigint[]",
        PgType::Int2 => "smallint[]",
        PgType::Int4 => "integer[]",
        PgType::Text => "text[]",
        PgType::Oid => "oid[]",
        PgType::Tid => "tid[]",
        PgType::Float4 => "real[]",
        PgType::Float8 => "double precision[]",
        PgType::Varchar => "character varying[]",
        PgType::Date => "date[]",
        PgType::Time => "time without time zone[]",
        PgType::Timestamp => "timestamp without time zone[]",
        PgType::TimestampTz => "timestamp with time zone[]",
        PgType::Interval => "interval[]",
        PgType::TimeTz => "time with time zone[]",
        PgType::Numeric(_) => "numeric[]",
        PgType::Uuid => "uuid[]",
        PgType::Inet => "inet[]",
        PgType::Xid => "xid[]",
        PgType::Unknown => "unknown[]",
        PgType::Void => "void[]",
        PgType::RegProc => "regproc[]",
        PgType::RegClass => "regclass[]",
        PgType::RegType => "regtype[]",
        PgType::RegNamespace => "regnamespace[]",
        PgType::Json => "json[]",
        PgType::Jsonb => "jsonb[]",
        PgType::AclItem => "aclitem[]",
        PgType::Int2Vector => "int2vector[]",
        PgType::OidVector => "oidvector[]",
        PgType::Array(_) => "anyarray",
        PgType::Record(_) => "record[]",
    }
}

impl fmt::Display for PgType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.sql_name())
    }
}

/// One SQL value. The column's [`PgType`] says how to interpret it; several types
/// share a variant (e.g. `text`, `varchar` and `name` are all [`Datum::Text`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Datum {
    /// SQL NULL.
    Null,
    /// `boolean`.
    Bool(bool),
    /// `smallint`.
    Int2(i16),
    /// `integer`.
    Int4(i32),
    /// `bigint`.
    Int8(i64),
    /// `real`.
    Float4(f32),
    /// `double precision`.
    Float8(f64),
    /// `text`, `varchar`, `name`, `"char"` (one character). Shared, so
    /// copying rows (from the scan cache, through projections) does not copy
    /// their strings.
    Text(Arc<str>),
    /// `bytea`.
    Bytea(Vec<u8>),
    /// `uuid`, as its 16 bytes in network order.
    Uuid([u8; 16]),
    /// `timestamp with time zone`: microseconds since 2000-01-01 00:00:00 UTC.
    TimestampTz(i64),
    /// `timestamp without time zone`: microseconds since 2000-01-01 00:00:00.
    Timestamp(i64),
    /// `date`: days since 2000-01-01.
    Date(i32),
    /// `time`: microseconds since midnight.
    Time(i64),
    /// `time with time zone`: microseconds since midnight and the zone's offset in
    /// seconds *west* of UTC (PostgreSQL's convention, so UTC+2 is -7200).
    TimeTz {
        /// Microseconds since midnight, local time.
        micros: i64,
        /// Seconds west of UTC.
        offset_west_secs: i32,
    },
    /// `interval`.
    Interval {
        /// Whole months.
        months: i32,
        /// Whole days.
        days: i32,
        /// Microseconds.
        micros: i64,
    },
    /// `numeric`, kept as its canonical decimal text (e.g. `-12.340`, `NaN`).
    Numeric(String),
    /// `jsonb`, kept as its output text (`{"a": 1}`), which
    /// [`crate::value::jsonb::parse`] reads back.
    Jsonb(Arc<str>),
    /// `oid` (and an object-identifier alias whose name is not known).
    Oid(u32),
    /// A `regclass`, `regtype` or `regnamespace`: the object's oid, which it
    /// compares as, and the name it prints as.
    Reg {
        /// The object's oid.
        oid: u32,
        /// Its name, as the type's output function prints it.
        name: Arc<str>,
    },
    /// `tid`: (block, offset).
    Tid {
        /// Block number.
        block: u32,
        /// Item offset within the block (1-based in PostgreSQL).
        offset: u16,
    },
    /// An array (of any element type; the column's type names it), its
    /// elements from subscript 1.
    Array(Arc<[Datum]>),
    /// An `int2vector` / `oidvector`: an array from subscript 0, printed
    /// space-separated.
    Vector(Arc<[Datum]>),
    /// A row value (`record`): its fields in order.
    Record(Arc<[Datum]>),
}

impl Datum {
    /// True for SQL NULL.
    pub fn is_null(&self) -> bool {
        matches!(self, Datum::Null)
    }

    /// The value as an `i64` when it is any integer variant.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Datum::Int2(v) => Some(i64::from(*v)),
            Datum::Int4(v) => Some(i64::from(*v)),
            Datum::Int8(v) => Some(*v),
            Datum::Oid(v) | Datum::Reg { oid: v, .. } => Some(i64::from(*v)),
            _ => None,
        }
    }

    /// A [`Datum::Text`] from any string.
    pub fn text(s: impl Into<Arc<str>>) -> Datum {
        Datum::Text(s.into())
    }

    /// A [`Datum::Jsonb`] of this value.
    pub fn jsonb(value: &crate::value::jsonb::Jsonb) -> Datum {
        Datum::Jsonb(value.to_text().into())
    }

    /// An array of these elements.
    pub fn array(elements: impl Into<Arc<[Datum]>>) -> Datum {
        Datum::Array(elements.into())
    }

    /// The elements of an array or vector value.
    pub fn elements(&self) -> Option<&[Datum]> {
        match self {
            Datum::Array(items) | Datum::Vector(items) => Some(items),
            _ => None,
        }
    }

    /// The value as a string slice when it is [`Datum::Text`].
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Datum::Text(s) => Some(s),
            _ => None,
        }
    }
}

/// A row: one [`Datum`] per column, in the relation's column order.
pub type Row = Vec<Datum>;

/// A named, typed column of a relation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnDef {
    /// Column name, as PostgreSQL would fold it (lower case unless quoted).
    pub name: String,
    /// Column type.
    pub pg_type: PgType,
    /// Whether the column was declared `NOT NULL`.
    pub not_null: bool,
    /// The column's `DEFAULT`: the text of a constant of its type (`None`: NULL).
    pub default: Option<String>,
    /// For a result column that reads a table's column as it is: the
    /// table's oid and the column's number (`attnum`), as RowDescription
    /// tells them; `None` for other columns (and in table definitions).
    pub table_column: Option<(u32, i16)>,
}

impl ColumnDef {
    /// A nullable column without a default.
    pub fn new(name: impl Into<String>, pg_type: PgType) -> Self {
        ColumnDef {
            name: name.into(),
            pg_type,
            not_null: false,
            default: None,
            table_column: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_create_table_type_names() {
        assert_eq!(PgType::from_sql_name("BIGINT"), Some(PgType::Int8));
        assert_eq!(
            PgType::from_sql_name("TIMESTAMP WITH TIME ZONE"),
            Some(PgType::TimestampTz)
        );
        assert_eq!(
            PgType::from_sql_name("DECIMAL(18,3)"),
            Some(PgType::Numeric(Some((18, 3))))
        );
        assert_eq!(
            PgType::from_sql_name("double  precision"),
            Some(PgType::Float8)
        );
        assert_eq!(PgType::from_sql_name("TIME_NS"), None);
        assert_eq!(
            PgType::from_sql_name("numeric(10,2)[]"),
            Some(PgType::array_of(PgType::Numeric(Some((10, 2)))))
        );
        assert_eq!(
            PgType::from_sql_name("NUMERIC[]"),
            Some(PgType::array_of(PgType::Numeric(None)))
        );
        assert_eq!(
            PgType::from_sql_name("_int4"),
            Some(PgType::array_of(PgType::Int4))
        );
        assert_eq!(PgType::from_sql_name("int[][]"), None);
    }

    #[test]
    fn numeric_typmod_matches_postgres() {
        // PostgreSQL reports numeric(18,3) as atttypmod 1179655.
        assert_eq!(PgType::Numeric(Some((18, 3))).type_modifier(), 1_179_655);
        assert_eq!(PgType::Int8.type_modifier(), -1);
    }
}
