//! PostgreSQL's library of built-in functions and operators, in one
//! registry: each entry ([`Builtin`]) says its name, parameters, result
//! type, volatility and strictness next to the code that computes it, one
//! file per family. The binder finds the entries of a name and resolves a
//! call among them by PostgreSQL's rules ([`resolve`]); the executor only
//! calls the entry it was given.
//!
//! Families: [`arith`] (the number operators), [`math`] (mathematical
//! functions), [`datetime`] (date and time operators and functions),
//! [`arrays`] (array functions), [`strings`] (string, regular
//! expression and binary string functions), [`system`] (information about values
//! and the session), [`activity`] (the server's sessions), [`catalog_info`] (what the catalog says of objects), [`privileges`] (who may
//! use them), [`json`] (`json` and `jsonb`), [`number_format`] (`to_char` of numbers,
//! `to_number`).

use std::collections::HashMap;
use std::sync::LazyLock;

use crate::plan::{Builtin, Form};

pub(crate) mod activity;
mod arith;
mod arrays;
mod catalog_info;
pub(crate) mod datetime;
mod def;
mod degrees;
pub(crate) mod json;
mod libm;
mod math;
mod number_format;
mod privileges;
pub(crate) mod resolve;
pub(crate) mod strings;
mod system;

use def::Library;

/// The registry: every built-in by name (functions) or symbol (operators).
struct Registry {
    functions: HashMap<&'static str, Vec<&'static Builtin>>,
    prefix: HashMap<&'static str, Vec<&'static Builtin>>,
    infix: HashMap<&'static str, Vec<&'static Builtin>>,
}

static REGISTRY: LazyLock<Registry> = LazyLock::new(|| {
    let mut library = Library::default();
    arith::register(&mut library);
    math::register(&mut library);
    arrays::register(&mut library);
    system::register(&mut library);
    catalog_info::register(&mut library);
    datetime::register(&mut library);
    strings::register(&mut library);
    activity::register(&mut library);
    privileges::register(&mut library);
    json::register(&mut library);
    number_format::register(&mut library);
    let mut registry = Registry {
        functions: HashMap::new(),
        prefix: HashMap::new(),
        infix: HashMap::new(),
    };
    for builtin in library.into_entries() {
        let map = match builtin.form {
            Form::Function => &mut registry.functions,
            Form::Prefix => &mut registry.prefix,
            Form::Infix => &mut registry.infix,
        };
        map.entry(builtin.name).or_default().push(builtin);
    }
    registry
});

/// The built-in functions named `name` (folded), if any.
pub(crate) fn functions(name: &str) -> &'static [&'static Builtin] {
    REGISTRY
        .functions
        .get(name)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// The operators `symbol` of `form` (prefix or infix), if any.
pub(crate) fn operators(symbol: &str, form: Form) -> &'static [&'static Builtin] {
    let map = match form {
        Form::Prefix => &REGISTRY.prefix,
        _ => &REGISTRY.infix,
    };
    map.get(symbol).map(Vec::as_slice).unwrap_or_default()
}
