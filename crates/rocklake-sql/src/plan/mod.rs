//! The bound (planned) form of statements: typed expressions over flat rows,
//! and query plans the executor ([`crate::exec`]) runs.

use std::sync::Arc;

use rocklake_types::datum::{Datum, PgType};

use crate::catalog::VirtualTable;
use crate::storage::{RelationDef, ScanFilter};

mod aggregates;
mod builtin;
pub(crate) mod coercion;
pub(crate) mod params;
mod types;
pub use aggregates::{aggregate_named, AggFunc, Dispersion, Regression};
pub use builtin::{
    Builtin, Call, CallEnv, CallInfo, Form, Param, Reads, Returns, ScalarFn, ValueMemory,
    Volatility,
};
pub use types::{common_type, comparable};

/// A bound expression's type; `None` is PostgreSQL's `unknown` (an untyped
/// string literal or NULL that has not been coerced yet).
pub type Ty = Option<PgType>;

/// Comparison operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmpOp {
    /// `=`
    Eq,
    /// `<>` / `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

/// Scalar functions evaluated per row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Func {
    /// `(row).field`: field number N (from 0) of a row value.
    RecordField(usize),
    /// `ROW(...)` and whole-row references: a row of the arguments.
    Row,
    /// `COALESCE(...)`
    Coalesce,
    /// `NULLIF(a, b)`
    Nullif,
    /// `GREATEST(...)`
    Greatest,
    /// `LEAST(...)`
    Least,
    /// `pg_database_size(name | oid)`, over the scan at this index.
    DatabaseSize(usize),
    /// `pg_relation_size(regclass)` (also `pg_table_size`,
    /// `pg_total_relation_size`), over the scan at this index.
    RelationSize(usize),
    /// `pg_size_pretty(bigint)`.
    SizePretty,
    /// `array_to_string(array, delimiter)`.
    ArrayToString,
    /// A cast to `regclass`, `regtype` or `regnamespace`: the object of
    /// that oid or name.
    ToReg(crate::catalog::RegKind),
    /// `pg_get_indexdef(index oid [, column, pretty])`.
    IndexDef,
    /// `pg_get_constraintdef(constraint oid [, pretty])`.
    ConstraintDef,
    /// `array || array`, `array_cat`.
    ArrayCat,
    /// `array || element`, `array_append`.
    ArrayAppend,
    /// `element || array`, `array_prepend`.
    ArrayPrepend,
    /// `pg_relation_is_publishable(regclass)`: whether the relation is a
    /// permanent table.
    RelationIsPublishable,
    /// `obj_description(oid, catalog)`, `col_description(table oid, column)`.
    Description,
    /// `current_setting(name [, missing_ok])`.
    CurrentSetting,
    /// `set_config(name, value, is_local)`.
    SetConfig,
}

/// Set-returning functions in a select list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetFunc {
    /// `unnest(array)`: its elements.
    Unnest,
    /// `generate_subscripts(array, dimension [, reverse])`: its subscripts.
    GenerateSubscripts,
    /// `generate_series(start, stop [, step])` over integers.
    GenerateSeries,
    /// `information_schema._pg_expandarray(array)`: a row `(x, n)` per
    /// element, `x` the element and `n` its position from 1.
    ExpandArray,
}

/// One set-returning call of a select list: it adds a column to the rows
/// the projection reads, one row per value (calls of one select list run in
/// lockstep, the shorter padded with NULLs, as in PostgreSQL 10 and later).
#[derive(Debug, Clone)]
pub struct SetCall {
    /// The function.
    pub func: SetFunc,
    /// Its arguments, over the rows before the call.
    pub args: Vec<BExpr>,
}

/// One aggregate call of a SELECT.
#[derive(Debug, Clone)]
pub struct AggCall {
    /// The function.
    pub func: AggFunc,
    /// Its arguments over FROM rows (none for `count(*)`; `string_agg` has
    /// the value and the delimiter).
    pub args: Vec<BExpr>,
    /// `DISTINCT` before the arguments.
    pub distinct: bool,
    /// `ORDER BY` inside the call: (expression, descending, nulls first).
    pub order: Vec<(BExpr, bool, bool)>,
    /// `FILTER (WHERE ...)`.
    pub filter: Option<BExpr>,
}

impl AggCall {
    /// A call with one (or no) argument and nothing else.
    #[cfg(test)]
    pub fn simple(func: AggFunc, arg: Option<BExpr>) -> Self {
        AggCall {
            func,
            args: arg.into_iter().collect(),
            distinct: false,
            order: Vec::new(),
            filter: None,
        }
    }
}

/// A window function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowFunc {
    /// `ntile(buckets)`
    Ntile,
    /// `percent_rank()`
    PercentRank,
    /// `cume_dist()`
    CumeDist,
    /// `nth_value(value, n)`
    NthValue,
    /// `row_number()`
    RowNumber,
    /// `rank()`
    Rank,
    /// `dense_rank()`
    DenseRank,
    /// `lag(x [, offset [, default]])`
    Lag,
    /// `lead(x [, offset [, default]])`
    Lead,
    /// `first_value(x)`
    FirstValue,
    /// `last_value(x)`
    LastValue,
    /// An aggregate over the window frame.
    Aggregate(AggFunc),
}

/// One `f(args) OVER (PARTITION BY ... ORDER BY ... [frame])`, over the
/// rows of the SELECT's FROM and WHERE.
#[derive(Debug, Clone)]
pub struct WindowCall {
    /// The function.
    pub func: WindowFunc,
    /// Its arguments.
    pub args: Vec<BExpr>,
    /// PARTITION BY expressions.
    pub partition: Vec<BExpr>,
    /// ORDER BY expressions with (descending, nulls first).
    pub order: Vec<(BExpr, bool, bool)>,
    /// The rows of the partition an aggregate, `first_value` and
    /// `last_value` are computed over, for each row.
    pub frame: WindowFrame,
}

/// A window frame: from `start` to `end` of the current row, in `units`.
#[derive(Debug, Clone)]
pub struct WindowFrame {
    /// What the offsets count.
    pub units: FrameUnits,
    /// Where the frame starts.
    pub start: FrameBound,
    /// Where it ends (inclusive).
    pub end: FrameBound,
}

impl WindowFrame {
    /// PostgreSQL's default frame, `RANGE BETWEEN UNBOUNDED PRECEDING AND
    /// CURRENT ROW`: the partition up to the current row's last peer (all
    /// of it when the window has no ORDER BY).
    pub fn default_frame() -> Self {
        WindowFrame {
            units: FrameUnits::Range,
            start: FrameBound::UnboundedPreceding,
            end: FrameBound::CurrentRow,
        }
    }
}

/// What the offsets of a window frame count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameUnits {
    /// Rows.
    Rows,
    /// Values of the ORDER BY key: `CURRENT ROW` means the current row's
    /// peers (offsets are not supported).
    Range,
    /// Peer groups (rows equal in the ORDER BY keys).
    Groups,
}

/// One end of a window frame.
#[derive(Debug, Clone)]
pub enum FrameBound {
    /// The partition's first row.
    UnboundedPreceding,
    /// That many rows (peer groups) before the current one: a `bigint`
    /// without columns of the query, evaluated once.
    Preceding(BExpr),
    /// The current row (with `RANGE` and `GROUPS`: its first or last peer).
    CurrentRow,
    /// That many rows (peer groups) after the current one.
    Following(BExpr),
    /// The partition's last row.
    UnboundedFollowing,
}

/// A subquery used inside an expression.
#[derive(Debug, Clone)]
pub struct SubPlan {
    /// Unique id within the statement (cache key for uncorrelated subqueries).
    pub id: usize,
    /// Whether it references columns of enclosing queries.
    pub correlated: bool,
    /// The plan.
    pub plan: Box<QueryPlan>,
}

/// A bound, typed expression.
#[derive(Debug, Clone)]
pub enum BExpr {
    /// A constant.
    Const(Datum),
    /// Column `idx` of the row `up` levels out (0 = the current row).
    Col {
        /// Query nesting level.
        up: usize,
        /// Column index in that row.
        idx: usize,
    },
    /// Explicit or implicit cast.
    Cast(Box<BExpr>, PgType),
    /// Boolean NOT.
    Not(Box<BExpr>),
    /// `||`.
    Concat(Box<BExpr>, Box<BExpr>),
    /// Comparison.
    Cmp(CmpOp, Box<BExpr>, Box<BExpr>),
    /// `AND` of two or more conditions (a chain `a AND b AND c` is one node,
    /// so long chains do not nest).
    And(Vec<BExpr>),
    /// `OR` of two or more conditions, like [`BExpr::And`].
    Or(Vec<BExpr>),
    /// `IS [NOT] NULL` (flag: negated).
    IsNull(Box<BExpr>, bool),
    /// `IS [NOT] DISTINCT FROM` (flag: negated = NOT DISTINCT).
    IsDistinct(Box<BExpr>, Box<BExpr>, bool),
    /// `IS [NOT] TRUE/FALSE`: (expr, target, negated).
    IsBool(Box<BExpr>, bool, bool),
    /// `x [NOT] IN (list)`.
    InList(Box<BExpr>, Vec<BExpr>, bool),
    /// `x [NOT] IN (list)` over a long list of constants, looked up in a
    /// hash set as PostgreSQL does (the list is kept for key seeks).
    InSet(Box<BExpr>, Arc<ConstantSet>, bool),
    /// `x [NOT] IN (subquery)`.
    InSub(Box<BExpr>, SubPlan, bool),
    /// `[NOT] EXISTS (subquery)`.
    Exists(SubPlan, bool),
    /// Scalar subquery.
    Scalar(SubPlan),
    /// `[NOT] LIKE` / `ILIKE`: (expr, pattern, negated, case-insensitive,
    /// escape character: `\\` unless `ESCAPE` names another or none).
    Like(Box<BExpr>, Box<BExpr>, bool, bool, Option<char>),
    /// `CASE`.
    Case {
        /// `CASE x WHEN ...` operand.
        operand: Option<Box<BExpr>>,
        /// `WHEN cond THEN result` pairs.
        whens: Vec<(BExpr, BExpr)>,
        /// `ELSE` result.
        otherwise: Option<Box<BExpr>>,
    },
    /// Scalar function call.
    Func(Func, Vec<BExpr>),
    /// A call of the built-in library (a function or an operator).
    Call(Box<Call>),
    /// `ARRAY[...]`.
    Array(Vec<BExpr>),
    /// `ARRAY(subquery)`.
    ArraySub(SubPlan),
    /// `x op ANY (array)` / `x op ALL (array)` (flag: ALL).
    AnyAll(CmpOp, Box<BExpr>, Box<BExpr>, bool),
    /// `array[subscript]`.
    Subscript(Box<BExpr>, Box<BExpr>),
    /// Bind parameter `$n` of a statement being prepared (never evaluated:
    /// a statement runs with its parameters' values in place).
    Param(usize),
}

macro_rules! for_each_child {
    ($e:expr, $f:expr, $($ref:tt)+) => {
        match $e {
            BExpr::Const(_)
            | BExpr::Col { .. }
            | BExpr::Param(_)
            | BExpr::Exists(..)
            | BExpr::Scalar(_)
            | BExpr::ArraySub(_) => {}
            BExpr::Cast(a, _)
            | BExpr::Not(a)
            | BExpr::IsNull(a, _)
            | BExpr::IsBool(a, ..)
            | BExpr::InSet(a, ..)
            | BExpr::InSub(a, ..) => $f(a),
            BExpr::Concat(a, b)
            | BExpr::Cmp(_, a, b)
            | BExpr::IsDistinct(a, b, _)
            | BExpr::Like(a, b, ..)
            | BExpr::AnyAll(_, a, b, _)
            | BExpr::Subscript(a, b) => {
                $f(a);
                $f(b);
            }
            BExpr::InList(a, list, _) => {
                $f(a);
                list.$($ref)+().for_each(|x| $f(x));
            }
            BExpr::And(items) | BExpr::Or(items) | BExpr::Func(_, items) | BExpr::Array(items) => {
                items.$($ref)+().for_each(|x| $f(x))
            }
            BExpr::Call(call) => call.args.$($ref)+().for_each(|x| $f(x)),
            BExpr::Case {
                operand,
                whens,
                otherwise,
            } => {
                if let Some(o) = operand {
                    $f(o);
                }
                for (w, t) in whens {
                    $f(w);
                    $f(t);
                }
                if let Some(o) = otherwise {
                    $f(o);
                }
            }
        }
    };
}

impl BExpr {
    /// Calls `f` on each direct sub-expression of this level (not inside
    /// subqueries).
    pub fn for_each_child(&self, mut f: impl FnMut(&BExpr)) {
        for_each_child!(self, f, iter);
    }

    /// Calls `f` on each direct sub-expression, mutably.
    pub fn for_each_child_mut(&mut self, mut f: impl FnMut(&mut BExpr)) {
        for_each_child!(self, f, iter_mut);
    }

    /// Whether the expression holds a subquery anywhere.
    pub fn has_subquery(&self) -> bool {
        if matches!(
            self,
            BExpr::InSub(..) | BExpr::Exists(..) | BExpr::Scalar(_) | BExpr::ArraySub(_)
        ) {
            return true;
        }
        let mut found = false;
        self.for_each_child(|c| found = found || c.has_subquery());
        found
    }
}

/// A result column.
#[derive(Debug, Clone, PartialEq)]
pub struct OutCol {
    /// Column name.
    pub name: String,
    /// Column type.
    pub ty: Ty,
    /// The table column it reads as it is, if any (see
    /// [`rocklake_types::ColumnDef::table_column`]).
    pub origin: Option<(u32, i16)>,
}

/// Where a scan reads from.
#[derive(Debug, Clone)]
pub enum ScanSource {
    /// A stored relation (rows get a trailing hidden `ctid`).
    Table(RelationDef),
    /// A virtual pg_catalog / information_schema table.
    Virtual(VirtualTable),
    /// The bytes the database takes in storage: one row `(bytes)`
    /// (`pg_database_size`).
    DatabaseSize,
    /// The bytes each stored relation takes: rows `(oid, bytes)`
    /// (`pg_relation_size` and its siblings).
    RelationSizes,
}

/// One base-table read, prefetched before execution.
#[derive(Debug, Clone)]
pub struct ScanReq {
    /// What to read.
    pub source: ScanSource,
    /// Bounds pushed down to storage (inexact).
    pub filter: ScanFilter,
    /// `column = (uncorrelated scalar subquery)` conjuncts: the subqueries run
    /// first and their values become equality bounds of this scan (see
    /// `dml::prefetch`).
    pub keyed_by: Vec<(usize, SubPlan)>,
    /// Whether the statement reads this scan's `ctid` by name, so its rows
    /// must carry it (see [`crate::exec::scan_data::ScanData`]).
    pub reads_ctid: bool,
    /// Whether a join reads this virtual table's rows by key
    /// ([`FromPlan::Lookup`]) instead of the prefetched table.
    pub looked_up: bool,
    /// The columns of a virtual table the query reads, in order: its rows
    /// hold only these (see `bind/pruning.rs`); `None`: every column.
    pub columns: Option<Vec<usize>>,
}

/// Join kinds the executor implements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JoinKind {
    /// Inner / cross join.
    Inner,
    /// Left outer join.
    Left,
    /// Right outer join: also each right row that matched no left row,
    /// with NULLs for the left columns.
    Right,
    /// Full outer join: a left and a right outer join at once.
    Full,
}

/// The FROM clause of a SELECT.
#[derive(Debug, Clone)]
pub enum FromPlan {
    /// No FROM: a single empty row.
    Empty,
    /// A prefetched scan (index into the statement's scan list).
    Scan(usize),
    /// A subquery, CTE reference or VALUES list.
    Derived(Arc<QueryPlan>),
    /// A `LATERAL` subquery: only as the right input of an inner or left
    /// join, run once per left row with that row as the level above its own.
    Lateral(Arc<QueryPlan>),
    /// A set-returning function in FROM (`generate_series(1, 3) AS s`):
    /// its arguments over the enclosing queries' rows only; one column,
    /// or with `spread` the fields of the rows it returns
    /// (`jsonb_each(...)`: `key`, `value`).
    Function {
        /// The call.
        call: SetCall,
        /// Whether each value is a row whose fields are the columns.
        spread: bool,
        /// `WITH ORDINALITY`: a last `bigint` column numbering the rows
        /// from 1.
        ordinality: bool,
    },
    /// The rows of a virtual table whose column `column` equals a column of
    /// the left input: only as the right input of an inner or left join with
    /// that column among its equi-join pairs, which looks the rows up per
    /// left row instead of building the whole table (its scan is marked
    /// [`ScanReq::looked_up`] and not prefetched).
    Lookup {
        /// The virtual table.
        table: VirtualTable,
        /// The keyed column ([`VirtualTable::is_keyed`]).
        column: usize,
        /// The columns the query reads, in order: the rows looked up hold
        /// only these (`column` is the table's own numbering); `None`: all.
        columns: Option<Vec<usize>>,
    },
    /// A join of two inputs.
    Join {
        /// Left input.
        left: Box<FromPlan>,
        /// Right input.
        right: Box<FromPlan>,
        /// Join kind.
        kind: JoinKind,
        /// Join condition over the concatenated row.
        on: Option<BExpr>,
        /// Width of the left input's rows.
        left_width: usize,
        /// Width of the right input's rows.
        right_width: usize,
        /// Equi-join column pairs (left index, right index relative to the right row).
        equi: Vec<(usize, usize)>,
    },
}

/// Aggregation step of a SELECT.
#[derive(Debug, Clone)]
pub struct AggPlan {
    /// GROUP BY expressions over FROM rows.
    pub group: Vec<BExpr>,
    /// Aggregate calls.
    pub calls: Vec<AggCall>,
}

/// A single SELECT.
#[derive(Debug, Clone)]
pub struct SelectPlan {
    /// Input rows.
    pub from: FromPlan,
    /// WHERE over FROM rows.
    pub filter: Option<BExpr>,
    /// GROUP BY / aggregates; when set, projection and having read rows of
    /// `group values ++ aggregate values`.
    pub agg: Option<AggPlan>,
    /// HAVING.
    pub having: Option<BExpr>,
    /// Window function calls, computed over the filtered rows before the
    /// projection; each appends one column to the row.
    pub windows: Vec<WindowCall>,
    /// Set-returning calls of the select list, run after grouping and
    /// windows; each appends one column to the row.
    pub set_calls: Vec<SetCall>,
    /// Output expressions (visible columns, then hidden sort keys).
    pub projection: Vec<BExpr>,
    /// SELECT DISTINCT.
    pub distinct: bool,
    /// SELECT DISTINCT ON (...).
    pub distinct_on: Option<DistinctOn>,
}

/// `SELECT DISTINCT ON (expressions)`: of each group of rows equal in the
/// expressions, the first in an order.
#[derive(Debug, Clone)]
pub struct DistinctOn {
    /// The columns of the projection that hold the expressions.
    pub columns: Vec<usize>,
    /// The order the rows are sorted in before the first of each group is
    /// kept: the query's ORDER BY without repeated keys, then ascending the
    /// DISTINCT ON columns it lacks, as PostgreSQL sorts them (its rows are
    /// then in the query's order, which needs no sort of its own).
    pub order: Vec<SortKey>,
}

impl SelectPlan {
    /// `SELECT projection FROM from [WHERE filter]`: no grouping, windows,
    /// set-returning calls or DISTINCT.
    pub fn plain(from: FromPlan, filter: Option<BExpr>, projection: Vec<BExpr>) -> SelectPlan {
        SelectPlan {
            from,
            filter,
            agg: None,
            having: None,
            windows: Vec::new(),
            set_calls: Vec::new(),
            projection,
            distinct: false,
            distinct_on: None,
        }
    }
}

/// The set operations between two queries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetOperation {
    /// `UNION`: the rows of either.
    Union,
    /// `INTERSECT`: the rows of both.
    Intersect,
    /// `EXCEPT`: the rows of the left one that the right one lacks.
    Except,
}

impl SetOperation {
    /// The SQL keyword, for messages.
    pub fn keyword(self) -> &'static str {
        match self {
            SetOperation::Union => "UNION",
            SetOperation::Intersect => "INTERSECT",
            SetOperation::Except => "EXCEPT",
        }
    }
}

/// A set expression: SELECT, VALUES or a set operation.
#[derive(Debug, Clone)]
pub enum SetPlan {
    /// A SELECT.
    Select(Box<SelectPlan>),
    /// A VALUES list (already coerced to the column types).
    Values(Vec<Vec<BExpr>>),
    /// The rows a recursive CTE's recursive term reads: those the previous
    /// iteration produced (see [`SetPlan::Recursive`]).
    WorkTable(usize),
    /// `WITH RECURSIVE`: `base UNION [ALL] step`, the step run again over
    /// the rows the last run added until it adds none.
    Recursive {
        /// The CTE's id (its [`SetPlan::WorkTable`]).
        id: usize,
        /// The non-recursive term.
        base: Box<SetPlan>,
        /// The recursive term.
        step: Box<SetPlan>,
        /// UNION ALL (no duplicate removal).
        all: bool,
        /// Casts of the step's columns to the base's types.
        step_casts: Vec<Option<PgType>>,
    },
    /// `UNION`, `INTERSECT` or `EXCEPT` (each `[ALL]`) with per-column
    /// casts applied to each side.
    SetOp {
        /// Which operation.
        op: SetOperation,
        /// Left input.
        left: Box<SetPlan>,
        /// Right input.
        right: Box<SetPlan>,
        /// `ALL`: duplicates kept (`UNION ALL`), counted (`INTERSECT ALL`
        /// keeps min(m, n) copies of a row, `EXCEPT ALL` max(m - n, 0)).
        all: bool,
        /// Casts for the left side's columns.
        left_casts: Vec<Option<PgType>>,
        /// Casts for the right side's columns.
        right_casts: Vec<Option<PgType>>,
    },
}

/// One ORDER BY key over the body's output row.
#[derive(Debug, Clone)]
pub struct SortKey {
    /// Column of the body row.
    pub idx: usize,
    /// Descending.
    pub desc: bool,
    /// NULLs first.
    pub nulls_first: bool,
}

/// A complete query: body, ordering and limits.
#[derive(Debug, Clone)]
pub struct QueryPlan {
    /// The body.
    pub body: SetPlan,
    /// ORDER BY.
    pub order: Vec<SortKey>,
    /// LIMIT.
    pub limit: Option<BExpr>,
    /// OFFSET.
    pub offset: Option<BExpr>,
    /// Visible result columns (the body may carry hidden sort columns after them).
    pub columns: Vec<OutCol>,
}

/// The constants of a long `IN` list, hashed.
#[derive(Debug)]
pub struct ConstantSet {
    /// The constants, in list order.
    pub values: Vec<Datum>,
    /// Their [`rocklake_types::value::equality::hash_key`]s.
    pub keys: std::collections::HashSet<String>,
}
