//! What a bound call of a built-in function or operator is: the entry of
//! the library it resolved to ([`Builtin`], registered in
//! [`crate::functions`]), its arguments, and the types resolution gave
//! them. The executor runs it through the entry's `eval`, without knowing
//! the library.

use rocklake_types::datum::{Datum, PgType};
use rocklake_types::SqlError;

use crate::catalog::Catalog;

use super::BExpr;

/// How often a function's result may change for the same arguments
/// (`pg_proc.provolatile`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Volatility {
    /// The same for the same arguments, always: may be computed once at
    /// bind time for constant arguments.
    Immutable,
    /// The same within a statement (reads settings, the catalog or the
    /// statement's time).
    Stable,
    /// May change on every call (`random()`, `clock_timestamp()`).
    Volatile,
}

/// What a function reads besides its arguments, which decides whether a
/// result may be shared between sessions (see
/// [`crate::query::shared_results`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reads {
    /// Its arguments only (and the catalog, which shared results track).
    Arguments,
    /// The session (its settings, its user), the time or a random source.
    Session,
}

/// How one argument position accepts types.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Param {
    /// This type, after implicit coercion.
    Ty(PgType),
    /// `anyelement`: any type, the same at every polymorphic position.
    AnyElement,
    /// `anyarray`: an array of the polymorphic element type.
    AnyArray,
    /// `anycompatible`: the common type of every `anycompatible` argument.
    AnyCompatible,
    /// `anycompatiblearray`: an array of the common type.
    AnyCompatibleArray,
    /// `"any"`: any type, independently at each position.
    Any,
}

/// The result type of a function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Returns {
    /// This type.
    Ty(PgType),
    /// An array of the resolved polymorphic element type.
    ArrayOfElement,
}

/// A built-in function, or the function behind an operator.
pub struct Builtin {
    /// The function's name, or the operator's symbol.
    pub name: &'static str,
    /// Function, prefix operator or infix operator.
    pub form: Form,
    /// The parameters in order.
    pub params: Vec<Param>,
    /// A last parameter that takes any number of further arguments
    /// (`VARIADIC`), repeated after `params`.
    pub variadic: Option<Param>,
    /// How many of the trailing `params` may be left out.
    pub optional: usize,
    /// The values of the last parameters when a call in named notation
    /// leaves them out (PostgreSQL's defaults).
    pub defaults: Vec<Datum>,
    /// The parameters' names, for calls in named notation (`days => 3`).
    pub names: &'static [&'static str],
    /// The result type.
    pub returns: Returns,
    /// See [`Volatility`].
    pub volatility: Volatility,
    /// See [`Reads`].
    pub reads: Reads,
    /// A strict function returns NULL for any NULL argument without being
    /// called.
    pub strict: bool,
    /// Computes the result from the argument values.
    pub eval: ScalarFn,
}

impl std::fmt::Debug for Builtin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}({:?})", self.name, self.params)
    }
}

/// How a [`Builtin`] is called.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// `name(args)`.
    Function,
    /// `op x`.
    Prefix,
    /// `x op y`.
    Infix,
}

/// Computes a built-in's result.
pub type ScalarFn = fn(&[Datum], &CallInfo, &CallEnv<'_>) -> Result<Datum, SqlError>;

/// What a call knows of itself: the types its arguments were resolved to
/// and its result type.
#[derive(Debug, Clone, PartialEq)]
pub struct CallInfo {
    /// The argument types after resolution (what each argument was coerced
    /// to; for `"any"` positions, the argument's own type).
    pub arg_types: Vec<PgType>,
    /// Which arguments were untyped literals (PostgreSQL's `unknown`).
    pub untyped: Vec<bool>,
    /// The result type.
    pub result: PgType,
}

/// What a built-in may read besides its arguments.
pub struct CallEnv<'a> {
    /// The statement's catalog snapshot (settings, relations, roles).
    pub catalog: &'a Catalog,
    /// What a built-in that makes a large value (an array, a long string)
    /// checks its size against.
    pub memory: &'a dyn ValueMemory,
    /// The statement's cancel, timeout and shutdown signals, for a built-in
    /// that waits (`None` while binding: immutable calls do not wait).
    pub interrupt: Option<&'a rocklake_types::Interrupt>,
}

/// The statement's memory, as a built-in making a large value sees it.
pub trait ValueMemory {
    /// Fails with the statement's out-of-memory error (53200) when
    /// `bytes` more would not fit.
    fn check(&self, bytes: usize) -> Result<(), SqlError>;
}

/// A bound call of a built-in.
#[derive(Debug, Clone)]
pub struct Call {
    /// The library entry.
    pub builtin: &'static Builtin,
    /// The arguments, coerced to `info.arg_types`.
    pub args: Vec<BExpr>,
    /// See [`CallInfo`].
    pub info: CallInfo,
}
