//! The statistical aggregates, computed as PostgreSQL computes them so that
//! results agree to the last digit: the dispersion of one variable
//! (`var_pop`, `var_samp`, `stddev_pop`, `stddev_samp`) exactly in
//! `numeric` for integer and numeric inputs (sums of values and squares,
//! PostgreSQL's division and square-root scales) and with the
//! Youngs-Cramer updates in `double precision` for floating inputs; the
//! two-variable ones (`corr`, `covar_*`, `regr_*`) with the same updates;
//! the bitwise ones; and the ordered-set ones (`percentile_cont`,
//! `percentile_disc`, `mode`) over their sorted input.

use rocklake_types::datum::Datum;
use rocklake_types::value::numeric;
use rocklake_types::{SqlError, SqlState};

use crate::exec::compare::{compare, numeric_text};
use crate::plan::{Dispersion, Regression};

/// Running sums of one variable.
#[derive(Clone, Debug)]
pub(crate) enum Moments {
    /// Floating inputs: count, sum, sum of squared deviations.
    Float { n: f64, sx: f64, sxx: f64 },
    /// Integer and numeric inputs: count, exact sum and sum of squares.
    Exact { n: i64, sx: String, sxx: String },
}

impl Moments {
    /// The state after its first value.
    pub(crate) fn first(value: &Datum) -> Moments {
        match value {
            Datum::Float4(_) | Datum::Float8(_) => Moments::Float {
                n: 0.0,
                sx: 0.0,
                sxx: 0.0,
            },
            _ => Moments::Exact {
                n: 0,
                sx: "0".into(),
                sxx: "0".into(),
            },
        }
    }

    /// Adds a non-NULL value.
    pub(crate) fn add(&mut self, value: &Datum) -> Result<(), SqlError> {
        match self {
            Moments::Float { n, sx, sxx } => {
                let x = float(value);
                let before = *n;
                *n += 1.0;
                *sx += x;
                if before > 0.0 {
                    let tmp = x * *n - *sx;
                    *sxx += tmp * tmp / (*n * before);
                } else if !x.is_finite() {
                    *sxx = f64::NAN;
                }
            }
            Moments::Exact { n, sx, sxx } => {
                let x = numeric_text(value).unwrap_or_default();
                *n += 1;
                *sx = numeric::arith(sx, &x, '+')?;
                *sxx = numeric::arith(sxx, &numeric::arith(&x, &x, '*')?, '+')?;
            }
        }
        Ok(())
    }

    /// The aggregate's result.
    pub(crate) fn finish(&self, kind: Dispersion) -> Result<Datum, SqlError> {
        let sample = matches!(kind, Dispersion::VarSamp | Dispersion::StddevSamp);
        let root = matches!(kind, Dispersion::StddevPop | Dispersion::StddevSamp);
        match self {
            Moments::Float { n, sxx, .. } => {
                if *n == 0.0 || (sample && *n <= 1.0) {
                    return Ok(Datum::Null);
                }
                let variance = sxx / if sample { n - 1.0 } else { *n };
                Ok(Datum::Float8(if root { variance.sqrt() } else { variance }))
            }
            Moments::Exact { n, sx, sxx } => {
                if *n == 0 || (sample && *n <= 1) {
                    return Ok(Datum::Null);
                }
                let count = n.to_string();
                let numerator = numeric::arith(
                    &numeric::arith(&count, sxx, '*')?,
                    &numeric::arith(sx, sx, '*')?,
                    '-',
                )?;
                if numeric::compare(&numerator, "0") != std::cmp::Ordering::Greater {
                    return Ok(Datum::Numeric("0".into()));
                }
                let denominator = if sample { n * (n - 1) } else { n * n };
                let variance = numeric::arith(&numerator, &denominator.to_string(), '/')?;
                if !root {
                    return Ok(Datum::Numeric(variance));
                }
                let scale = variance.split_once('.').map_or(0, |(_, f)| f.len());
                Ok(Datum::Numeric(numeric::math::sqrt_with_scale(
                    &variance,
                    scale as u32,
                )?))
            }
        }
    }
}

fn float(value: &Datum) -> f64 {
    match value {
        Datum::Float8(v) => *v,
        Datum::Float4(v) => f64::from(*v),
        other => other.as_i64().map_or(0.0, |v| v as f64),
    }
}

/// Running sums of two variables (`Y`, `X`).
#[derive(Clone, Debug, Default)]
pub(crate) struct Pairs {
    n: f64,
    sx: f64,
    sy: f64,
    sxx: f64,
    syy: f64,
    sxy: f64,
}

impl Pairs {
    /// Adds a pair where neither is NULL.
    pub(crate) fn add(&mut self, y: &Datum, x: &Datum) {
        let (y, x) = (float(y), float(x));
        let before = self.n;
        self.n += 1.0;
        self.sx += x;
        self.sy += y;
        if before > 0.0 {
            let tmp_x = x * self.n - self.sx;
            let tmp_y = y * self.n - self.sy;
            let scale = 1.0 / (self.n * before);
            self.sxx += tmp_x * tmp_x * scale;
            self.syy += tmp_y * tmp_y * scale;
            self.sxy += tmp_x * tmp_y * scale;
        } else {
            if !x.is_finite() {
                self.sxx = f64::NAN;
                self.sxy = f64::NAN;
            }
            if !y.is_finite() {
                self.syy = f64::NAN;
                self.sxy = f64::NAN;
            }
        }
    }

    /// The aggregate's result.
    pub(crate) fn finish(&self, kind: Regression) -> Datum {
        let Pairs {
            n,
            sx,
            sy,
            sxx,
            syy,
            sxy,
        } = *self;
        let value = match kind {
            Regression::Count => return Datum::Int8(n as i64),
            _ if n < 1.0 => return Datum::Null,
            Regression::CovarSamp if n < 2.0 => return Datum::Null,
            Regression::CovarPop => sxy / n,
            Regression::CovarSamp => sxy / (n - 1.0),
            Regression::Sxx => sxx,
            Regression::Syy => syy,
            Regression::Sxy => sxy,
            Regression::AvgX => sx / n,
            Regression::AvgY => sy / n,
            Regression::Corr if sxx == 0.0 || syy == 0.0 => return Datum::Null,
            Regression::Corr => sxy / (sxx * syy).sqrt(),
            Regression::R2 | Regression::Slope | Regression::Intercept if sxx == 0.0 => {
                return Datum::Null
            }
            Regression::R2 if syy == 0.0 => 1.0,
            Regression::R2 => (sxy * sxy) / (sxx * syy),
            Regression::Slope => sxy / sxx,
            Regression::Intercept => (sy - sx * sxy / sxx) / n,
        };
        Datum::Float8(value)
    }
}

/// `bit_and`, `bit_or`, `bit_xor` of one more value.
pub(crate) fn combine_bits(acc: &Datum, value: &Datum, op: char) -> Datum {
    let (Some(a), Some(b)) = (acc.as_i64(), value.as_i64()) else {
        return value.clone();
    };
    let bits = match op {
        '&' => a & b,
        '|' => a | b,
        _ => a ^ b,
    };
    match value {
        Datum::Int2(_) => Datum::Int2(bits as i16),
        Datum::Int4(_) => Datum::Int4(bits as i32),
        _ => Datum::Int8(bits),
    }
}

/// The fraction of `percentile_cont`/`percentile_disc`, checked.
fn fraction(value: &Datum) -> Result<f64, SqlError> {
    let f = float(value);
    if !(0.0..=1.0).contains(&f) {
        return Err(SqlError::new(
            SqlState::NUMERIC_VALUE_OUT_OF_RANGE,
            format!(
                "percentile value {} is not between 0 and 1",
                rocklake_types::value::text::format_text(&Datum::Float8(f)).unwrap_or_default()
            ),
        ));
    }
    Ok(f)
}

/// `percentile_cont(fraction) WITHIN GROUP (ORDER BY x)` over the sorted
/// non-NULL values: interpolated between the two nearest (`double
/// precision`; `interval` values are interpolated field by field).
pub(crate) fn percentile_cont(sorted: &[Datum], fraction_value: &Datum) -> Result<Datum, SqlError> {
    if fraction_value.is_null() {
        return Ok(Datum::Null);
    }
    let f = fraction(fraction_value)?;
    if sorted.is_empty() {
        return Ok(Datum::Null);
    }
    let position = f * (sorted.len() - 1) as f64;
    let (low, high) = (position.floor() as usize, position.ceil() as usize);
    let weight = position - low as f64;
    Ok(match (&sorted[low], &sorted[high]) {
        (a, _) if low == high => a.clone(),
        (
            Datum::Interval {
                months: m1,
                days: d1,
                micros: u1,
            },
            Datum::Interval {
                months: m2,
                days: d2,
                micros: u2,
            },
        ) => {
            let lerp = |a: f64, b: f64| a + weight * (b - a);
            let months = lerp(f64::from(*m1), f64::from(*m2));
            let days = lerp(f64::from(*d1), f64::from(*d2));
            let micros = lerp(*u1 as f64, *u2 as f64);
            interval_from_parts(months, days, micros)
        }
        (a, b) => {
            let (a, b) = (float(a), float(b));
            Datum::Float8(a + weight * (b - a))
        }
    })
}

/// An interval from fractional fields, the fractions cascading down as
/// PostgreSQL's interval multiplication does.
fn interval_from_parts(months: f64, days: f64, micros: f64) -> Datum {
    let whole_months = months.trunc();
    let days = days + (months - whole_months) * 30.0;
    let whole_days = days.trunc();
    let micros = micros + (days - whole_days) * 86_400_000_000.0;
    Datum::Interval {
        months: whole_months as i32,
        days: whole_days as i32,
        micros: micros.round() as i64,
    }
}

/// `percentile_disc(fraction) WITHIN GROUP (ORDER BY x)`: the first value
/// whose position in the sorted input reaches the fraction.
pub(crate) fn percentile_disc(sorted: &[Datum], fraction_value: &Datum) -> Result<Datum, SqlError> {
    if fraction_value.is_null() {
        return Ok(Datum::Null);
    }
    let f = fraction(fraction_value)?;
    if sorted.is_empty() {
        return Ok(Datum::Null);
    }
    let row = ((f * sorted.len() as f64).ceil() as usize).max(1);
    Ok(sorted[row.min(sorted.len()) - 1].clone())
}

/// `mode() WITHIN GROUP (ORDER BY x)`: the most frequent value, the first
/// in the sort order among equally frequent ones.
pub(crate) fn mode(sorted: &[Datum]) -> Datum {
    let mut best: Option<(&Datum, usize)> = None;
    let mut run: Option<(&Datum, usize)> = None;
    for value in sorted {
        run = match run {
            Some((current, count)) if compare(current, value).is_eq() => Some((current, count + 1)),
            _ => Some((value, 1)),
        };
        let (current, count) = run.expect("just set");
        if best.is_none_or(|(_, most)| count > most) {
            best = Some((current, count));
        }
    }
    best.map_or(Datum::Null, |(value, _)| value.clone())
}
