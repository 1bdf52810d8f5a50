//! Trigonometry in degrees as PostgreSQL computes it: exact at the angles
//! where the answer is a simple number (`sind(30)` is 0.5, `acosd(0.5)` is
//! 60), by scaling the C library's functions against their values at 30,
//! 45 and 60 degrees rather than converting to radians first.

use super::libm;

const RADIANS_PER_DEGREE: f64 = std::f64::consts::PI / 180.0;

fn sin_30() -> f64 {
    libm::sin(30.0 * RADIANS_PER_DEGREE)
}

fn one_minus_cos_60() -> f64 {
    1.0 - libm::cos(60.0 * RADIANS_PER_DEGREE)
}

fn asin_0_5() -> f64 {
    libm::asin(0.5)
}

fn acos_0_5() -> f64 {
    libm::acos(0.5)
}

fn atan_1_0() -> f64 {
    libm::atan(1.0)
}

/// sin(x) for x in [0, 30], exact at 30.
fn sind_0_to_30(x: f64) -> f64 {
    (libm::sin(x * RADIANS_PER_DEGREE) / sin_30()) / 2.0
}

/// cos(x) for x in [0, 60], exact at 60.
fn cosd_0_to_60(x: f64) -> f64 {
    1.0 - ((1.0 - libm::cos(x * RADIANS_PER_DEGREE)) / one_minus_cos_60()) / 2.0
}

/// sin(x) for x in the first quadrant.
fn sind_q1(x: f64) -> f64 {
    if x <= 30.0 {
        sind_0_to_30(x)
    } else {
        cosd_0_to_60(90.0 - x)
    }
}

/// cos(x) for x in the first quadrant.
fn cosd_q1(x: f64) -> f64 {
    if x <= 60.0 {
        cosd_0_to_60(x)
    } else {
        sind_0_to_30(90.0 - x)
    }
}

/// `x` reduced to [0, 360); NaN for an infinity (an error to the caller).
fn reduced(x: f64) -> f64 {
    if x.is_infinite() {
        f64::NAN
    } else {
        x % 360.0
    }
}

/// Zero without a sign, as PostgreSQL returns it.
fn unsigned_zero(x: f64) -> f64 {
    if x == 0.0 {
        0.0
    } else {
        x
    }
}

/// `sind(x)`.
pub(super) fn sind(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    let mut angle = reduced(x);
    let mut sign = 1.0;
    if angle < 0.0 {
        angle = -angle;
        sign = -sign;
    }
    if angle > 180.0 {
        angle = 360.0 - angle;
        sign = -sign;
    }
    if angle > 90.0 {
        angle = 180.0 - angle;
    }
    unsigned_zero(sign * sind_q1(angle))
}

/// `cosd(x)`.
pub(super) fn cosd(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    let mut angle = reduced(x);
    if angle < 0.0 {
        angle = -angle;
    }
    if angle > 180.0 {
        angle = 360.0 - angle;
    }
    let mut sign = 1.0;
    if angle > 90.0 {
        angle = 180.0 - angle;
        sign = -sign;
    }
    unsigned_zero(sign * cosd_q1(angle))
}

/// The angle folded into the first quadrant with the sign of its tangent.
fn tangent_quadrant(x: f64) -> (f64, f64) {
    let mut angle = reduced(x);
    let mut sign = 1.0;
    if angle < 0.0 {
        angle = -angle;
        sign = -sign;
    }
    if angle > 180.0 {
        angle = 360.0 - angle;
        sign = -sign;
    }
    if angle > 90.0 {
        angle = 180.0 - angle;
        sign = -sign;
    }
    (angle, sign)
}

/// `tand(x)`.
pub(super) fn tand(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    let (angle, sign) = tangent_quadrant(x);
    let tan_45 = sind_q1(45.0) / cosd_q1(45.0);
    unsigned_zero(sign * ((sind_q1(angle) / cosd_q1(angle)) / tan_45))
}

/// `cotd(x)`.
pub(super) fn cotd(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    let (angle, sign) = tangent_quadrant(x);
    let cot_45 = cosd_q1(45.0) / sind_q1(45.0);
    unsigned_zero(sign * ((cosd_q1(angle) / sind_q1(angle)) / cot_45))
}

/// asin(x) in degrees for x in [0, 1].
fn asind_q1(x: f64) -> f64 {
    if x <= 0.5 {
        (libm::asin(x) / asin_0_5()) * 30.0
    } else {
        90.0 - (libm::acos(x) / acos_0_5()) * 60.0
    }
}

/// acos(x) in degrees for x in [0, 1].
fn acosd_q1(x: f64) -> f64 {
    if x <= 0.5 {
        90.0 - (libm::asin(x) / asin_0_5()) * 30.0
    } else {
        (libm::acos(x) / acos_0_5()) * 60.0
    }
}

/// `asind(x)`; NaN outside [-1, 1] (an error to the caller).
pub(super) fn asind(x: f64) -> f64 {
    if x.is_nan() || !(-1.0..=1.0).contains(&x) {
        return f64::NAN;
    }
    if x >= 0.0 {
        asind_q1(x)
    } else {
        -asind_q1(-x)
    }
}

/// `acosd(x)`; NaN outside [-1, 1] (an error to the caller).
pub(super) fn acosd(x: f64) -> f64 {
    if x.is_nan() || !(-1.0..=1.0).contains(&x) {
        return f64::NAN;
    }
    if x >= 0.0 {
        acosd_q1(x)
    } else {
        180.0 - acosd_q1(-x)
    }
}

/// `atand(x)`.
pub(super) fn atand(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    (libm::atan(x) / atan_1_0()) * 45.0
}

/// `atan2d(y, x)`.
pub(super) fn atan2d(y: f64, x: f64) -> f64 {
    if x.is_nan() || y.is_nan() {
        return f64::NAN;
    }
    (libm::atan2(y, x) / atan_1_0()) * 45.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simple_angles_are_exact() {
        assert_eq!(sind(30.0), 0.5);
        assert_eq!(cosd(60.0), 0.5);
        assert_eq!(tand(45.0), 1.0);
        assert_eq!(sind(180.0), 0.0);
        assert_eq!(cosd(90.0), 0.0);
        assert_eq!(asind(0.5), 30.0);
        assert_eq!(acosd(0.5), 60.0);
        assert_eq!(atand(1.0), 45.0);
        assert_eq!(sind(-30.0), -0.5);
        assert!(asind(2.0).is_nan());
    }
}
