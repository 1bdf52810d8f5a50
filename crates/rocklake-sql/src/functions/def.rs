//! How a family declares its entries: `lib.function("sqrt", [FLOAT8],
//! FLOAT8, dsqrt)` with PostgreSQL's defaults (immutable, strict, reading
//! nothing but its arguments), changed where the function differs.

use rocklake_types::datum::PgType;

use crate::plan::{Builtin, Form, Param, Reads, Returns, ScalarFn, Volatility};

/// The entries families add, before they are indexed.
#[derive(Default)]
pub(super) struct Library {
    entries: Vec<&'static Builtin>,
}

impl Library {
    /// A function `name(params) returns returns`.
    pub(super) fn function<P: Into<Param>, const N: usize>(
        &mut self,
        name: &'static str,
        params: [P; N],
        returns: impl Into<Returns>,
        eval: ScalarFn,
    ) -> Entry<'_> {
        let params = params.into_iter().map(Into::into).collect();
        self.entry(name, Form::Function, params, returns.into(), eval)
    }

    /// An infix operator `left symbol right`.
    pub(super) fn infix(
        &mut self,
        symbol: &'static str,
        left: impl Into<Param>,
        right: impl Into<Param>,
        returns: impl Into<Returns>,
        eval: ScalarFn,
    ) -> Entry<'_> {
        let params = vec![left.into(), right.into()];
        self.entry(symbol, Form::Infix, params, returns.into(), eval)
    }

    /// A prefix operator `symbol operand`.
    pub(super) fn prefix(
        &mut self,
        symbol: &'static str,
        operand: impl Into<Param>,
        returns: impl Into<Returns>,
        eval: ScalarFn,
    ) -> Entry<'_> {
        let params = vec![operand.into()];
        self.entry(symbol, Form::Prefix, params, returns.into(), eval)
    }

    fn entry(
        &mut self,
        name: &'static str,
        form: Form,
        params: Vec<Param>,
        returns: Returns,
        eval: ScalarFn,
    ) -> Entry<'_> {
        Entry {
            library: self,
            builtin: Some(Builtin {
                name,
                form,
                params,
                variadic: None,
                optional: 0,
                defaults: Vec::new(),
                names: &[],
                returns,
                volatility: Volatility::Immutable,
                reads: Reads::Arguments,
                strict: true,
                eval,
            }),
        }
    }

    /// Every entry, for good.
    pub(super) fn into_entries(self) -> Vec<&'static Builtin> {
        self.entries
    }
}

/// An entry being declared; added to the library when dropped.
pub(super) struct Entry<'a> {
    library: &'a mut Library,
    builtin: Option<Builtin>,
}

impl Entry<'_> {
    fn builtin(&mut self) -> &mut Builtin {
        self.builtin.as_mut().expect("an entry is added once")
    }

    /// Stable: the same within a statement (reads settings or the time).
    pub(super) fn stable(mut self) -> Self {
        self.builtin().volatility = Volatility::Stable;
        self
    }

    /// Volatile: may change with every call.
    pub(super) fn volatile(mut self) -> Self {
        self.builtin().volatility = Volatility::Volatile;
        self
    }

    /// Reads the session (settings, user) or the time, besides its
    /// arguments.
    pub(super) fn reads_session(mut self) -> Self {
        self.builtin().reads = Reads::Session;
        self
    }

    /// Called with NULL arguments too.
    pub(super) fn not_strict(mut self) -> Self {
        self.builtin().strict = false;
        self
    }

    /// Takes any number of further arguments of `param` after the others.
    pub(super) fn variadic(mut self, param: Param) -> Self {
        self.builtin().variadic = Some(param);
        self
    }

    /// The last `count` parameters may be left out.
    pub(super) fn optional(mut self, count: usize) -> Self {
        self.builtin().optional = count;
        self
    }

    /// The last parameters may be left out, these values standing for
    /// them.
    pub(super) fn defaults(mut self, values: Vec<rocklake_types::datum::Datum>) -> Self {
        self.builtin().optional = values.len();
        self.builtin().defaults = values;
        self
    }

    /// The parameters' names, for calls in named notation.
    pub(super) fn names(mut self, names: &'static [&'static str]) -> Self {
        self.builtin().names = names;
        self
    }
}

impl Drop for Entry<'_> {
    fn drop(&mut self) {
        if let Some(builtin) = self.builtin.take() {
            self.library.entries.push(Box::leak(Box::new(builtin)));
        }
    }
}

impl From<PgType> for Param {
    fn from(t: PgType) -> Param {
        Param::Ty(t)
    }
}

impl From<PgType> for Returns {
    fn from(t: PgType) -> Returns {
        Returns::Ty(t)
    }
}

/// Shorthands for parameter and result types.
pub(super) mod types {
    use rocklake_types::datum::PgType;

    pub(crate) const BOOL: PgType = PgType::Bool;
    pub(crate) const INT2: PgType = PgType::Int2;
    pub(crate) const INT4: PgType = PgType::Int4;
    pub(crate) const INT8: PgType = PgType::Int8;
    pub(crate) const FLOAT4: PgType = PgType::Float4;
    pub(crate) const FLOAT8: PgType = PgType::Float8;
    pub(crate) const NUMERIC: PgType = PgType::Numeric(None);
    pub(crate) const TEXT: PgType = PgType::Text;
    pub(crate) const DATE: PgType = PgType::Date;
    pub(crate) const TIME: PgType = PgType::Time;
    pub(crate) const TIMETZ: PgType = PgType::TimeTz;
    pub(crate) const TIMESTAMP: PgType = PgType::Timestamp;
    pub(crate) const TIMESTAMPTZ: PgType = PgType::TimestampTz;
    pub(crate) const INTERVAL: PgType = PgType::Interval;
}
