//! Parameters (`$1`, `$2`, ...) as plans see them: how a placeholder is
//! numbered, the error for one without a value, and the types a statement
//! being prepared gives its parameters (see `crate::session::params` for
//! how bound values replace them at Execute).

use rocklake_types::datum::PgType;
use rocklake_types::{SqlError, SqlState};

/// The number `n` of a `$n` placeholder.
pub(crate) fn placeholder_index(text: &str) -> Result<usize, SqlError> {
    text.strip_prefix('$')
        .and_then(|n| n.parse::<usize>().ok())
        .filter(|n| *n > 0)
        .ok_or_else(|| {
            SqlError::new(
                SqlState::SYNTAX_ERROR,
                format!("syntax error at or near \"{text}\": parameters are written $1, $2, ..."),
            )
        })
}

/// The error for a `$n` without a value.
pub(crate) fn no_parameter(n: usize) -> SqlError {
    SqlError::new(
        SqlState::UNDEFINED_PARAMETER,
        format!("there is no parameter ${n}"),
    )
}

/// The parameters of a statement being prepared: their declared types and
/// the types the binder coerced them to.
#[derive(Debug, Clone, Default)]
pub struct ParamTypes {
    /// Declared by Parse (`None`: not given).
    pub declared: Vec<Option<PgType>>,
    /// Inferred from where each parameter is used.
    pub inferred: Vec<Option<PgType>>,
}

impl ParamTypes {
    /// `count` parameters, the first ones declared as `oids` (0: not given).
    pub fn new(oids: &[u32], count: usize) -> Self {
        let count = count.max(oids.len());
        let mut declared: Vec<Option<PgType>> =
            oids.iter().map(|oid| PgType::from_oid(*oid)).collect();
        declared.resize(count, None);
        ParamTypes {
            inferred: vec![None; count],
            declared,
        }
    }

    /// Records that `$n` is used as a value of `pg_type` (the first use wins).
    pub fn infer(&mut self, n: usize, pg_type: &PgType) {
        if let Some(slot) = self.inferred.get_mut(n - 1) {
            slot.get_or_insert_with(|| pg_type.clone());
        }
    }

    /// The type of each parameter as Describe reports it: declared, else
    /// inferred, else `text` (what PostgreSQL resolves an unused or
    /// context-free parameter to).
    pub fn resolved(&self) -> Vec<u32> {
        self.declared
            .iter()
            .zip(&self.inferred)
            .map(|(d, i)| d.as_ref().or(i.as_ref()).unwrap_or(&PgType::Text).oid())
            .collect()
    }
}
