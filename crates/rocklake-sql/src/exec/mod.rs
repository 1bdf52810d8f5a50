//! Execution: running bound plans over the rows of their scans.
//!
//! [`fetch`] reads the scans a statement needs; [`select`] turns a plan into
//! a pipeline of row streams ([`stream`], with [`join`], [`aggregate`] and
//! [`sort`]) that produce rows one at a time, so a result can be sent to the
//! client while it is computed and a join holds its inner side, not its
//! product; [`pick`] answers plain column lists in place. Expressions are
//! evaluated by [`eval`] with [`cast`], [`operators`], [`functions`] and the
//! ordering of [`compare`].
//!
//! Every operator that keeps rows charges them to the statement's
//! [`memory::MemoryBudget`], and every loop over rows checks the session's
//! [`rocklake_types::Interrupt`] (cancel, statement timeout, shutdown, client gone).

pub(crate) mod aggregate;
pub(crate) mod arrays;
pub(crate) mod cast;
pub(crate) mod compare;
pub(crate) mod context;
pub(crate) mod eval;
pub(crate) mod fetch;
pub(crate) mod frames;
pub(crate) mod functions;
pub(crate) mod join;
pub(crate) mod lateral;
pub(crate) mod lookup_join;
pub mod memory;
pub(crate) mod nested_join;
pub(crate) mod operators;
pub(crate) mod pick;
pub(crate) mod recursive;
pub(crate) mod scan_data;
pub(crate) mod select;
pub(crate) mod set_calls;
pub(crate) mod set_ops;
pub(crate) mod sort;
mod statistics;
pub(crate) mod stream;
pub(crate) mod window;

pub use context::{ExecCtx, Limits, Scope, StmtEnv};

use crate::catalog::Catalog;
use scan_data::ScanData;

impl<'a> ExecCtx<'a> {
    /// A context over prefetched scan data, whose nested queries run
    /// through the pipeline builder ([`select`]).
    pub fn new(data: &'a [ScanData], catalog: &'a Catalog, limits: Limits<'a>) -> Self {
        let pipelines = context::Pipelines {
            subquery: select::run_subquery,
            query: select::run_query,
            set: select::set_stream,
        };
        ExecCtx::with_pipelines(data, catalog, limits, pipelines)
    }
}
