//! Window frames: `{ROWS | RANGE | GROUPS} [BETWEEN] start [AND end]`, each
//! bound `UNBOUNDED PRECEDING`, `n PRECEDING`, `CURRENT ROW`, `n FOLLOWING`
//! or `UNBOUNDED FOLLOWING`, with PostgreSQL's checks: the impossible
//! combinations are its 42P20 errors, an offset is a `bigint` that reads no
//! column of the query (42P10), `GROUPS` needs an ORDER BY (42P20). `RANGE`
//! with an offset (`RANGE 5 PRECEDING`) is not supported (0A000).

use sqlparser::ast::{Expr, WindowFrameBound, WindowFrameUnits};

use crate::bind::Binder;
use crate::plan::{BExpr, FrameBound, FrameUnits, WindowFrame};
use rocklake_types::datum::PgType;
use rocklake_types::{SqlError, SqlState};

/// Fails with PostgreSQL's 42P20 for a frame its grammar rejects.
pub(super) fn check_frame(frame: Option<&sqlparser::ast::WindowFrame>) -> Result<(), SqlError> {
    let Some(frame) = frame else {
        return Ok(());
    };
    use WindowFrameBound::{CurrentRow, Following, Preceding};
    let end = frame.end_bound.as_ref();
    let message = match (&frame.start_bound, end) {
        (Following(None), _) => "frame start cannot be UNBOUNDED FOLLOWING",
        (_, Some(Preceding(None))) => "frame end cannot be UNBOUNDED PRECEDING",
        (Following(Some(_)), None) => {
            "frame starting from following row cannot end with current row"
        }
        (CurrentRow, Some(Preceding(Some(_)))) => {
            "frame starting from current row cannot have preceding rows"
        }
        (Following(Some(_)), Some(Preceding(Some(_)) | CurrentRow)) => {
            "frame starting from following row cannot have preceding rows"
        }
        _ => return Ok(()),
    };
    Err(SqlError::new(SqlState::WINDOWING_ERROR, message))
}

impl Binder<'_> {
    /// The frame of a window call (PostgreSQL's default without one);
    /// `ordered`: whether the window has an ORDER BY.
    pub(super) fn bind_frame(
        &mut self,
        frame: Option<&sqlparser::ast::WindowFrame>,
        ordered: bool,
    ) -> Result<WindowFrame, SqlError> {
        let Some(frame) = frame else {
            return Ok(WindowFrame::default_frame());
        };
        let units = match frame.units {
            WindowFrameUnits::Rows => FrameUnits::Rows,
            WindowFrameUnits::Range => FrameUnits::Range,
            WindowFrameUnits::Groups => FrameUnits::Groups,
        };
        if units == FrameUnits::Groups && !ordered {
            return Err(SqlError::new(
                SqlState::WINDOWING_ERROR,
                "GROUPS mode requires an ORDER BY clause",
            ));
        }
        let start = self.bind_frame_bound(&frame.start_bound, units)?;
        let end = match &frame.end_bound {
            Some(bound) => self.bind_frame_bound(bound, units)?,
            None => FrameBound::CurrentRow,
        };
        Ok(WindowFrame { units, start, end })
    }

    fn bind_frame_bound(
        &mut self,
        bound: &WindowFrameBound,
        units: FrameUnits,
    ) -> Result<FrameBound, SqlError> {
        Ok(match bound {
            WindowFrameBound::CurrentRow => FrameBound::CurrentRow,
            WindowFrameBound::Preceding(None) => FrameBound::UnboundedPreceding,
            WindowFrameBound::Following(None) => FrameBound::UnboundedFollowing,
            WindowFrameBound::Preceding(Some(e)) => {
                FrameBound::Preceding(self.bind_frame_offset(e, units)?)
            }
            WindowFrameBound::Following(Some(e)) => {
                FrameBound::Following(self.bind_frame_offset(e, units)?)
            }
        })
    }

    /// A `ROWS` or `GROUPS` offset: a `bigint` reading no column of this
    /// query level.
    fn bind_frame_offset(&mut self, e: &Expr, units: FrameUnits) -> Result<BExpr, SqlError> {
        // The parser reads a quoted offset as an interval: `'2' PRECEDING`
        // is the untyped literal '2' to PostgreSQL.
        let e = match e {
            Expr::Interval(interval)
                if interval.leading_field.is_none() && interval.last_field.is_none() =>
            {
                interval.value.as_ref()
            }
            other => other,
        };
        let name = match units {
            FrameUnits::Rows => "ROWS",
            FrameUnits::Groups => "GROUPS",
            FrameUnits::Range => {
                return Err(SqlError::unsupported(
                    "RANGE with offset PRECEDING/FOLLOWING is not supported",
                ))
            }
        };
        let (bound, ty) = self.bind_expr(e)?;
        if reads_this_level(&bound) {
            return Err(SqlError::new(
                SqlState::INVALID_COLUMN_REFERENCE,
                format!("argument of {name} must not contain variables"),
            ));
        }
        self.coerce(bound, &ty, &PgType::Int8, name)
    }
}

/// Whether `e` reads a column of the current query level's rows.
fn reads_this_level(e: &BExpr) -> bool {
    if matches!(e, BExpr::Col { up: 0, .. }) {
        return true;
    }
    let mut found = false;
    e.for_each_child(|c| found = found || reads_this_level(c));
    found
}
