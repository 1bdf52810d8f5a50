//! The functions `regproc` values name: the input, output, receive and send
//! functions of the types in `pg_type` (`typinput`, ...), with PostgreSQL
//! 15's oids. RockLake's functions are built in, not catalogued in
//! `pg_proc`; these are the ones its catalogs refer to.

use rocklake_types::datum::PgType;

/// `(oid, name)` of one function.
pub(crate) type Proc = (u32, &'static str);

/// The input, output, receive and send functions of a type (`(0, "-")`
/// where it has none).
pub fn io_functions(t: &PgType) -> [Proc; 4] {
    use PgType::*;
    match t {
        Bool => [
            (1242, "boolin"),
            (1243, "boolout"),
            (2436, "boolrecv"),
            (2437, "boolsend"),
        ],
        Bytea => [
            (1244, "byteain"),
            (31, "byteaout"),
            (2412, "bytearecv"),
            (2413, "byteasend"),
        ],
        Char => [
            (1245, "charin"),
            (33, "charout"),
            (2434, "charrecv"),
            (2435, "charsend"),
        ],
        Name => [
            (34, "namein"),
            (35, "nameout"),
            (2422, "namerecv"),
            (2423, "namesend"),
        ],
        Int8 => [
            (460, "int8in"),
            (461, "int8out"),
            (2408, "int8recv"),
            (2409, "int8send"),
        ],
        Int2 => [
            (38, "int2in"),
            (39, "int2out"),
            (2404, "int2recv"),
            (2405, "int2send"),
        ],
        Int2Vector => [
            (40, "int2vectorin"),
            (41, "int2vectorout"),
            (2410, "int2vectorrecv"),
            (2411, "int2vectorsend"),
        ],
        Int4 => [
            (42, "int4in"),
            (43, "int4out"),
            (2406, "int4recv"),
            (2407, "int4send"),
        ],
        RegProc => [
            (44, "regprocin"),
            (45, "regprocout"),
            (2444, "regprocrecv"),
            (2445, "regprocsend"),
        ],
        Text => [
            (46, "textin"),
            (47, "textout"),
            (2414, "textrecv"),
            (2415, "textsend"),
        ],
        Oid => [
            (1798, "oidin"),
            (1799, "oidout"),
            (2418, "oidrecv"),
            (2419, "oidsend"),
        ],
        Tid => [
            (48, "tidin"),
            (49, "tidout"),
            (2438, "tidrecv"),
            (2439, "tidsend"),
        ],
        OidVector => [
            (54, "oidvectorin"),
            (55, "oidvectorout"),
            (2420, "oidvectorrecv"),
            (2421, "oidvectorsend"),
        ],
        Json => [
            (321, "json_in"),
            (322, "json_out"),
            (323, "json_recv"),
            (324, "json_send"),
        ],
        Void => [
            (2298, "void_in"),
            (2299, "void_out"),
            (3120, "void_recv"),
            (3121, "void_send"),
        ],
        Unknown => [
            (109, "unknownin"),
            (110, "unknownout"),
            (2416, "unknownrecv"),
            (2417, "unknownsend"),
        ],
        Jsonb => [
            (3806, "jsonb_in"),
            (3804, "jsonb_out"),
            (3805, "jsonb_recv"),
            (3803, "jsonb_send"),
        ],
        Float4 => [
            (200, "float4in"),
            (201, "float4out"),
            (2424, "float4recv"),
            (2425, "float4send"),
        ],
        Float8 => [
            (214, "float8in"),
            (215, "float8out"),
            (2426, "float8recv"),
            (2427, "float8send"),
        ],
        AclItem => [
            (1031, "aclitemin"),
            (1032, "aclitemout"),
            (0, "-"),
            (0, "-"),
        ],
        Varchar => [
            (1046, "varcharin"),
            (1047, "varcharout"),
            (2432, "varcharrecv"),
            (2433, "varcharsend"),
        ],
        Date => [
            (1084, "date_in"),
            (1085, "date_out"),
            (2468, "date_recv"),
            (2469, "date_send"),
        ],
        Time => [
            (1143, "time_in"),
            (1144, "time_out"),
            (2470, "time_recv"),
            (2471, "time_send"),
        ],
        Timestamp => [
            (1312, "timestamp_in"),
            (1313, "timestamp_out"),
            (2474, "timestamp_recv"),
            (2475, "timestamp_send"),
        ],
        TimestampTz => [
            (1150, "timestamptz_in"),
            (1151, "timestamptz_out"),
            (2476, "timestamptz_recv"),
            (2477, "timestamptz_send"),
        ],
        Interval => [
            (1160, "interval_in"),
            (1161, "interval_out"),
            (2478, "interval_recv"),
            (2479, "interval_send"),
        ],
        TimeTz => [
            (1350, "timetz_in"),
            (1351, "timetz_out"),
            (2472, "timetz_recv"),
            (2473, "timetz_send"),
        ],
        Numeric(_) => [
            (1701, "numeric_in"),
            (1702, "numeric_out"),
            (2460, "numeric_recv"),
            (2461, "numeric_send"),
        ],
        Uuid => [
            (2952, "uuid_in"),
            (2953, "uuid_out"),
            (2961, "uuid_recv"),
            (2962, "uuid_send"),
        ],
        Xid => [
            (50, "xidin"),
            (51, "xidout"),
            (2440, "xidrecv"),
            (2441, "xidsend"),
        ],
        Inet => [
            (910, "inet_in"),
            (911, "inet_out"),
            (2496, "inet_recv"),
            (2497, "inet_send"),
        ],
        RegClass => [
            (2218, "regclassin"),
            (2219, "regclassout"),
            (2452, "regclassrecv"),
            (2453, "regclasssend"),
        ],
        RegType => [
            (2220, "regtypein"),
            (2221, "regtypeout"),
            (2454, "regtyperecv"),
            (2455, "regtypesend"),
        ],
        RegNamespace => [
            (4084, "regnamespacein"),
            (4085, "regnamespaceout"),
            (4087, "regnamespacerecv"),
            (4088, "regnamespacesend"),
        ],
        Array(_) => ARRAY_IO,
        Record(_) => RECORD_IO,
    }
}

/// The functions of every array type.
const ARRAY_IO: [Proc; 4] = [
    (750, "array_in"),
    (751, "array_out"),
    (2400, "array_recv"),
    (2401, "array_send"),
];

/// The functions of a table's row type (`typtype` `c`).
pub const RECORD_IO: [Proc; 4] = [
    (2290, "record_in"),
    (2291, "record_out"),
    (2402, "record_recv"),
    (2403, "record_send"),
];

/// Every function listed here.
fn all() -> impl Iterator<Item = Proc> {
    PgType::ALL
        .iter()
        .flat_map(io_functions)
        .chain(ARRAY_IO)
        .chain(RECORD_IO)
        .filter(|(oid, _)| *oid != 0)
}

/// The name of the function with this oid, if listed.
pub fn name(oid: u32) -> Option<&'static str> {
    all().find(|(o, _)| *o == oid).map(|(_, name)| name)
}

/// The oid of the function named `name` (optionally `pg_catalog.`, any
/// case unless quoted), if listed.
pub fn oid(name: &str) -> Option<u32> {
    let name = name.trim();
    let name = name
        .strip_prefix("pg_catalog.")
        .or_else(|| name.strip_prefix("\"pg_catalog\"."))
        .unwrap_or(name);
    let name = match name.strip_prefix('"').and_then(|n| n.strip_suffix('"')) {
        Some(quoted) => quoted.to_string(),
        None => name.to_lowercase(),
    };
    all().find(|(_, n)| *n == name).map(|(oid, _)| oid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn functions_are_found_by_oid_and_name() {
        assert_eq!(name(42), Some("int4in"));
        assert_eq!(oid("pg_catalog.array_in"), Some(750));
        assert_eq!(oid("ARRAY_IN"), Some(750));
        assert_eq!(oid("\"ARRAY_IN\""), None);
        assert_eq!(oid("nope"), None);
        assert_eq!(name(0), None);
    }
}
