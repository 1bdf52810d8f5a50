//! The aggregate functions a plan computes, and which names call them.

/// Aggregate functions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AggFunc {
    /// `count(*)`
    CountStar,
    /// `count(x)`
    Count,
    /// `sum(x)`
    Sum,
    /// `min(x)`
    Min,
    /// `max(x)`
    Max,
    /// `avg(x)`
    Avg,
    /// `bool_and(x)`
    BoolAnd,
    /// `bool_or(x)`
    BoolOr,
    /// `array_agg(x)`
    ArrayAgg,
    /// `string_agg(x, delimiter)`
    StringAgg,
    /// `var_pop`, `var_samp`/`variance`, `stddev_pop`, `stddev_samp`/`stddev`.
    Dispersion(Dispersion),
    /// `corr(y, x)`, `covar_*`, `regr_*`.
    Regression(Regression),
    /// `bit_and(x)`, `bit_or(x)`, `bit_xor(x)` (the operator's symbol).
    Bits(char),
    /// `percentile_cont(fraction) WITHIN GROUP (ORDER BY x)`.
    PercentileCont,
    /// `percentile_disc(fraction) WITHIN GROUP (ORDER BY x)`.
    PercentileDisc,
    /// `mode() WITHIN GROUP (ORDER BY x)`.
    Mode,
    /// `json_agg(x)` (`jsonb_agg` when `binary`): its argument is bound as
    /// the value's JSON; `rows` when the values are arrays or rows, which
    /// `json_agg` starts on new lines.
    JsonAgg {
        /// `jsonb_agg`.
        binary: bool,
        /// The values are arrays or rows.
        rows: bool,
    },
    /// `json_object_agg(key, value)` (`jsonb_object_agg` when `binary`):
    /// bound as the key's text and the value's JSON.
    JsonObjectAgg {
        /// `jsonb_object_agg`.
        binary: bool,
    },
}

impl AggFunc {
    /// Whether it is an ordered-set aggregate (`WITHIN GROUP`).
    pub fn is_ordered_set(self) -> bool {
        matches!(
            self,
            AggFunc::PercentileCont | AggFunc::PercentileDisc | AggFunc::Mode
        )
    }
}

/// The spread of one variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dispersion {
    /// `var_pop`
    VarPop,
    /// `var_samp`, `variance`
    VarSamp,
    /// `stddev_pop`
    StddevPop,
    /// `stddev_samp`, `stddev`
    StddevSamp,
}

/// The statistics of two variables (`y`, `x`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Regression {
    /// `corr`
    Corr,
    /// `covar_pop`
    CovarPop,
    /// `covar_samp`
    CovarSamp,
    /// `regr_count`
    Count,
    /// `regr_sxx`
    Sxx,
    /// `regr_syy`
    Syy,
    /// `regr_sxy`
    Sxy,
    /// `regr_avgx`
    AvgX,
    /// `regr_avgy`
    AvgY,
    /// `regr_r2`
    R2,
    /// `regr_slope`
    Slope,
    /// `regr_intercept`
    Intercept,
}

/// The aggregate named `name` (folded), if it is one.
pub fn aggregate_named(name: &str) -> Option<AggFunc> {
    use Dispersion::*;
    use Regression as R;
    Some(match name {
        "sum" => AggFunc::Sum,
        "min" => AggFunc::Min,
        "max" => AggFunc::Max,
        "avg" => AggFunc::Avg,
        "bool_and" | "every" => AggFunc::BoolAnd,
        "bool_or" => AggFunc::BoolOr,
        "array_agg" => AggFunc::ArrayAgg,
        "string_agg" => AggFunc::StringAgg,
        "var_pop" => AggFunc::Dispersion(VarPop),
        "var_samp" | "variance" => AggFunc::Dispersion(VarSamp),
        "stddev_pop" => AggFunc::Dispersion(StddevPop),
        "stddev_samp" | "stddev" => AggFunc::Dispersion(StddevSamp),
        "corr" => AggFunc::Regression(R::Corr),
        "covar_pop" => AggFunc::Regression(R::CovarPop),
        "covar_samp" => AggFunc::Regression(R::CovarSamp),
        "regr_count" => AggFunc::Regression(R::Count),
        "regr_sxx" => AggFunc::Regression(R::Sxx),
        "regr_syy" => AggFunc::Regression(R::Syy),
        "regr_sxy" => AggFunc::Regression(R::Sxy),
        "regr_avgx" => AggFunc::Regression(R::AvgX),
        "regr_avgy" => AggFunc::Regression(R::AvgY),
        "regr_r2" => AggFunc::Regression(R::R2),
        "regr_slope" => AggFunc::Regression(R::Slope),
        "regr_intercept" => AggFunc::Regression(R::Intercept),
        "bit_and" => AggFunc::Bits('&'),
        "bit_or" => AggFunc::Bits('|'),
        "bit_xor" => AggFunc::Bits('#'),
        "percentile_cont" => AggFunc::PercentileCont,
        "percentile_disc" => AggFunc::PercentileDisc,
        "mode" => AggFunc::Mode,
        "json_agg" => AggFunc::JsonAgg {
            binary: false,
            rows: false,
        },
        "jsonb_agg" => AggFunc::JsonAgg {
            binary: true,
            rows: false,
        },
        "json_object_agg" => AggFunc::JsonObjectAgg { binary: false },
        "jsonb_object_agg" => AggFunc::JsonObjectAgg { binary: true },
        _ => return None,
    })
}
