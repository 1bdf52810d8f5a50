//! The C math library's functions, which PostgreSQL calls for `double
//! precision`. Rust's own (and the copies linked into a Rust binary) round
//! some results differently in the last place: `cbrt(27)` is 3 there but
//! 3.0000000000000004 in the C library and so in PostgreSQL. The C
//! library's are looked up once at run time; where there is none, Rust's
//! are used.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::LazyLock;

type Unary = extern "C" fn(f64) -> f64;
type Binary = extern "C" fn(f64, f64) -> f64;

extern "C" {
    fn dlopen(filename: *const c_char, flags: c_int) -> *mut c_void;
    fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
}

/// `RTLD_NOW` of `dlfcn.h`.
const RTLD_NOW: c_int = 2;

/// The C math library's handle, if it can be opened.
static LIBRARY: LazyLock<Option<usize>> = LazyLock::new(|| {
    // SAFETY: dlopen takes a NUL-terminated name; a null result is handled.
    let handle = unsafe { dlopen(c"libm.so.6".as_ptr(), RTLD_NOW) };
    (!handle.is_null()).then_some(handle as usize)
});

fn symbol(name: &CStr) -> Option<*mut c_void> {
    let handle = (*LIBRARY)? as *mut c_void;
    // SAFETY: the handle came from dlopen; the name is NUL-terminated.
    let found = unsafe { dlsym(handle, name.as_ptr()) };
    (!found.is_null()).then_some(found)
}

fn unary(name: &CStr) -> Option<Unary> {
    // SAFETY: the C library's function of this name has this signature.
    symbol(name).map(|f| unsafe { std::mem::transmute::<*mut c_void, Unary>(f) })
}

fn binary(name: &CStr) -> Option<Binary> {
    // SAFETY: the C library's function of this name has this signature.
    symbol(name).map(|f| unsafe { std::mem::transmute::<*mut c_void, Binary>(f) })
}

macro_rules! unary_functions {
    ($($name:ident = $c:literal, $fallback:expr;)*) => {
        $(
            /// The C library's function of this name.
            pub(super) fn $name(x: f64) -> f64 {
                static F: LazyLock<Option<Unary>> = LazyLock::new(|| unary($c));
                match *F {
                    Some(f) => f(x),
                    None => $fallback(x),
                }
            }
        )*
    };
}

unary_functions! {
    cbrt = c"cbrt", f64::cbrt;
    exp = c"exp", f64::exp;
    ln = c"log", f64::ln;
    log10 = c"log10", f64::log10;
    sin = c"sin", f64::sin;
    cos = c"cos", f64::cos;
    tan = c"tan", f64::tan;
    asin = c"asin", f64::asin;
    acos = c"acos", f64::acos;
    atan = c"atan", f64::atan;
    sinh = c"sinh", f64::sinh;
    cosh = c"cosh", f64::cosh;
    tanh = c"tanh", f64::tanh;
    asinh = c"asinh", f64::asinh;
    acosh = c"acosh", f64::acosh;
    atanh = c"atanh", f64::atanh;
}

/// The C library's `pow`.
pub(super) fn pow(x: f64, y: f64) -> f64 {
    static F: LazyLock<Option<Binary>> = LazyLock::new(|| binary(c"pow"));
    match *F {
        Some(f) => f(x, y),
        None => x.powf(y),
    }
}

/// The C library's `atan2`.
pub(super) fn atan2(y: f64, x: f64) -> f64 {
    static F: LazyLock<Option<Binary>> = LazyLock::new(|| binary(c"atan2"));
    match *F {
        Some(f) => f(y, x),
        None => y.atan2(x),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_c_library_is_found_and_used() {
        assert!(super::LIBRARY.is_some(), "libm.so.6 not found");
        assert_eq!(super::cbrt(27.0), 3.0000000000000004);
        assert_eq!(super::pow(2.0, 10.0), 1024.0);
    }
}
