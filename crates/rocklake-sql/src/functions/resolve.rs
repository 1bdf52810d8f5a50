//! Which built-in a call means, by PostgreSQL's rules for functions and
//! operators (its documentation, "Type Conversion": operators 10.2,
//! functions 10.3; `func_select_candidate` in its source):
//!
//! 1. the entries of the name that take that many arguments;
//! 2. one that takes exactly the argument types wins (for a binary operator
//!    with one untyped argument, that argument is taken to be of the
//!    other's type);
//! 3. otherwise, among those every typed argument converts to implicitly:
//!    the most exact matches; then the most preferred types where a
//!    conversion is needed; then, for untyped arguments, the string
//!    category if any entry takes one there, else the one category all
//!    take (preferring its preferred type); last, if every typed argument
//!    has one type, untyped ones are taken to be of it.
//!
//! More than one left is PostgreSQL's "is not unique" (42725), none its
//! "does not exist" (42883).

use rocklake_types::datum::PgType;
use rocklake_types::{SqlError, SqlState};

use crate::plan::coercion::{category, coerces_implicitly, is_preferred, same_type, Category};
use crate::plan::{common_type, Builtin, CallInfo, Form, Param, Returns, Ty};

/// The entry a call resolved to, with its argument and result types.
#[derive(Debug)]
pub(crate) struct Resolved {
    /// The entry.
    pub(crate) builtin: &'static Builtin,
    /// Argument and result types.
    pub(crate) info: CallInfo,
}

/// Why no entry was chosen.
#[derive(Debug)]
pub(crate) enum Unresolved {
    /// No entry takes these arguments.
    NoMatch,
    /// More than one does, equally well.
    Ambiguous,
    /// The entry is polymorphic and the arguments do not say its type.
    Error(SqlError),
}

/// A candidate with the types its parameters take for these inputs
/// (`None`: a polymorphic position not yet known).
struct Fit {
    builtin: &'static Builtin,
    targets: Vec<Option<PgType>>,
}

/// Resolves a call of `inputs` (`None`: an untyped literal) among
/// `candidates`, all of one name.
pub(crate) fn resolve(
    candidates: &[&'static Builtin],
    inputs: &[Ty],
    form: Form,
) -> Result<Resolved, Unresolved> {
    let fits: Vec<Fit> = candidates
        .iter()
        .filter_map(|b| expand(b, inputs.len()).map(|params| (b, params)))
        .filter_map(|(b, params)| fit(b, &params, inputs))
        .collect();
    if let Some(exact) = exact_match(&fits, inputs, form) {
        return finish(exact, inputs);
    }
    let chosen = select(fits, inputs)?;
    finish(&chosen, inputs)
}

/// The parameters of `b` for a call of `count` arguments, or `None` when
/// it takes another number.
fn expand(b: &Builtin, count: usize) -> Option<Vec<Param>> {
    let fixed = b.params.len();
    match &b.variadic {
        // A variadic parameter takes at least one argument.
        Some(repeated) => (count > fixed).then(|| {
            let mut params = b.params.clone();
            params.resize(count, repeated.clone());
            params
        }),
        _ if count <= fixed && count + b.optional >= fixed => Some(b.params[..count].to_vec()),
        _ => None,
    }
}

/// `b` as a candidate for `inputs`: `None` unless every typed input
/// converts implicitly to its parameter and polymorphic positions agree.
fn fit(b: &'static Builtin, params: &[Param], inputs: &[Ty]) -> Option<Fit> {
    let poly = polymorphic_types(params, inputs)?;
    let mut targets = Vec::with_capacity(params.len());
    for (param, input) in params.iter().zip(inputs) {
        let target = match param {
            Param::Ty(t) => Some(t.clone()),
            Param::Any => Some(input.clone().unwrap_or(PgType::Text)),
            Param::AnyElement => poly.element.clone(),
            // An array (or vector) is taken as it is.
            Param::AnyArray => input
                .clone()
                .filter(PgType::is_array)
                .or_else(|| poly.element.clone().map(PgType::array_of)),
            Param::AnyCompatible => poly.compatible.clone(),
            Param::AnyCompatibleArray => poly.compatible.clone().map(PgType::array_of),
        };
        if let (Some(input), Some(target)) = (input, &target) {
            if !coerces_implicitly(input, target) {
                return None;
            }
        }
        targets.push(target);
    }
    Some(Fit {
        builtin: b,
        targets,
    })
}

/// The types the polymorphic positions stand for.
#[derive(Default)]
struct Polymorphic {
    element: Option<PgType>,
    compatible: Option<PgType>,
}

/// What the typed inputs say of the polymorphic positions; `None` when
/// they disagree.
fn polymorphic_types(params: &[Param], inputs: &[Ty]) -> Option<Polymorphic> {
    let mut poly = Polymorphic::default();
    let mut compatible: Ty = None;
    for (param, input) in params.iter().zip(inputs) {
        let Some(input) = input else { continue };
        let element = match param {
            Param::AnyElement => Some(input.clone()),
            Param::AnyArray => Some(input.element_type()?),
            Param::AnyCompatible => {
                compatible = common_type(&compatible, &Some(input.clone()), "").ok()?;
                None
            }
            Param::AnyCompatibleArray => {
                let element = input.element_type()?;
                compatible = common_type(&compatible, &Some(element), "").ok()?;
                None
            }
            Param::Ty(_) | Param::Any => None,
        };
        if let Some(element) = element {
            match &poly.element {
                Some(seen) if !same_type(seen, &element) => return None,
                _ => poly.element = Some(element),
            }
        }
    }
    poly.compatible = compatible;
    Some(poly)
}

/// The one fit whose parameters are exactly the input types, if any.
fn exact_match<'f>(fits: &'f [Fit], inputs: &[Ty], form: Form) -> Option<&'f Fit> {
    let mut inputs = inputs.to_vec();
    if form == Form::Infix {
        if let [a, b] = inputs.as_mut_slice() {
            match (a.is_none(), b.is_none()) {
                (true, false) => *a = b.clone(),
                (false, true) => *b = a.clone(),
                _ => {}
            }
        }
    }
    fits.iter().find(|f| {
        f.builtin
            .params
            .iter()
            .chain(f.builtin.variadic.iter())
            .all(|p| matches!(p, Param::Ty(_)))
            && f.targets.iter().zip(&inputs).all(|(t, i)| match (t, i) {
                (Some(t), Some(i)) => same_type(t, i),
                _ => false,
            })
    })
}

/// PostgreSQL's best-candidate selection among fits (steps 3c to 3f).
fn select(mut fits: Vec<Fit>, inputs: &[Ty]) -> Result<Fit, Unresolved> {
    if fits.len() <= 1 {
        return fits.pop().ok_or(Unresolved::NoMatch);
    }
    // The most exact matches.
    keep_best(&mut fits, |f| count(f, inputs, same_type));
    if fits.len() == 1 {
        return Ok(fits.remove(0));
    }
    // The most exact or preferred-in-the-input's-category matches.
    keep_best(&mut fits, |f| {
        count(f, inputs, |target, input| {
            same_type(target, input)
                || (is_preferred(target) && category(target) == category(input))
        })
    });
    if fits.len() == 1 {
        return Ok(fits.remove(0));
    }
    let unknown: Vec<usize> = (0..inputs.len()).filter(|&i| inputs[i].is_none()).collect();
    if unknown.is_empty() {
        return Err(Unresolved::Ambiguous);
    }
    if let Some(kept) = by_unknown_categories(&fits, &unknown) {
        fits = kept;
        if fits.len() == 1 {
            return Ok(fits.remove(0));
        }
    }
    // Last gasp: every typed input of one type; untyped ones taken to be it.
    let known: Vec<&PgType> = inputs.iter().flatten().collect();
    if let Some(first) = known.first() {
        if known.iter().all(|t| same_type(t, first)) {
            let mut accepting: Vec<Fit> = fits
                .into_iter()
                .filter(|f| {
                    unknown.iter().all(|&i| match &f.targets[i] {
                        Some(target) => coerces_implicitly(first, target),
                        None => true,
                    })
                })
                .collect();
            if accepting.len() == 1 {
                return Ok(accepting.remove(0));
            }
        }
    }
    Err(Unresolved::Ambiguous)
}

/// How many typed inputs of `f` satisfy `matches(target, input)`.
fn count(f: &Fit, inputs: &[Ty], matches: impl Fn(&PgType, &PgType) -> bool) -> usize {
    f.targets
        .iter()
        .zip(inputs)
        .filter(|(t, i)| match (t, i) {
            (Some(t), Some(i)) => matches(t, i),
            _ => false,
        })
        .count()
}

/// Keeps the fits with the highest score (all of them when none scores).
fn keep_best(fits: &mut Vec<Fit>, score: impl Fn(&Fit) -> usize) {
    let best = fits.iter().map(&score).max().unwrap_or(0);
    if best > 0 {
        fits.retain(|f| score(f) == best);
    }
}

/// Step 3e: at each untyped position, the category the fits agree on (the
/// string category wins), and its preferred type where one takes it.
/// `None` when the categories conflict.
fn by_unknown_categories(fits: &[Fit], unknown: &[usize]) -> Option<Vec<Fit>> {
    // `None` stands for a polymorphic position: a category of its own.
    let mut chosen: Vec<(Option<Category>, bool)> = Vec::new();
    for &i in unknown {
        let mut slot: Option<(Option<Category>, bool)> = None;
        let mut conflict = false;
        for f in fits {
            let target = f.targets[i].as_ref();
            let cat = target.map(category);
            let preferred = target.is_some_and(is_preferred);
            slot = match slot {
                None => Some((cat, preferred)),
                Some((seen, p)) if seen == cat => Some((seen, p || preferred)),
                Some((seen, p)) => {
                    if cat == Some(Category::String) {
                        Some((cat, preferred))
                    } else if seen == Some(Category::String) {
                        Some((seen, p))
                    } else {
                        conflict = true;
                        Some((seen, p))
                    }
                }
            };
        }
        let slot = slot?;
        if conflict && slot.0 != Some(Category::String) {
            return None;
        }
        chosen.push(slot);
    }
    let kept = fits
        .iter()
        .filter(|f| {
            unknown.iter().zip(&chosen).all(|(&i, (cat, preferred))| {
                let target = f.targets[i].as_ref();
                target.map(category) == *cat && (!preferred || target.is_some_and(is_preferred))
            })
        })
        .map(|f| Fit {
            builtin: f.builtin,
            targets: f.targets.clone(),
        })
        .collect();
    Some(kept)
}

/// The chosen fit with its polymorphic positions settled.
fn finish(f: &Fit, inputs: &[Ty]) -> Result<Resolved, Unresolved> {
    let b = f.builtin;
    let undetermined = || {
        Unresolved::Error(SqlError::new(
            SqlState::DATATYPE_MISMATCH,
            "could not determine polymorphic type because input has type unknown",
        ))
    };
    let params = expand(b, inputs.len()).ok_or(Unresolved::NoMatch)?;
    let element = params
        .iter()
        .zip(&f.targets)
        .find_map(|(p, t)| match p {
            Param::AnyElement | Param::AnyCompatible => t.clone(),
            Param::AnyArray | Param::AnyCompatibleArray => {
                t.as_ref().and_then(PgType::element_type)
            }
            _ => None,
        })
        .or_else(|| {
            // `anycompatible` of untyped literals only is text.
            params
                .iter()
                .any(|p| matches!(p, Param::AnyCompatible | Param::AnyCompatibleArray))
                .then_some(PgType::Text)
        });
    let mut arg_types = Vec::with_capacity(params.len());
    for (param, target) in params.iter().zip(&f.targets) {
        let t = match (target, param) {
            (Some(t), _) => t.clone(),
            (None, Param::AnyArray | Param::AnyCompatibleArray) => {
                PgType::array_of(element.clone().ok_or_else(undetermined)?)
            }
            (None, _) => element.clone().ok_or_else(undetermined)?,
        };
        arg_types.push(t);
    }
    let result = match &b.returns {
        Returns::Ty(t) => t.clone(),
        Returns::ArrayOfElement => PgType::array_of(element.ok_or_else(undetermined)?),
    };
    Ok(Resolved {
        builtin: b,
        info: CallInfo {
            arg_types,
            untyped: inputs.iter().map(Option::is_none).collect(),
            result,
        },
    })
}

/// PostgreSQL's error for a call that resolved to nothing: `name(types)`
/// for functions, `operator does not exist: a + b` for operators.
pub(crate) fn unresolved_error(why: Unresolved, name: &str, form: Form, inputs: &[Ty]) -> SqlError {
    let type_name = |t: &Ty| t.as_ref().map_or("unknown", PgType::display_name);
    let signature = match (form, inputs) {
        (Form::Infix, [l, r]) => format!("{} {name} {}", type_name(l), type_name(r)),
        (Form::Prefix, [x]) => format!("{name} {}", type_name(x)),
        _ => format!(
            "{name}({})",
            inputs.iter().map(type_name).collect::<Vec<_>>().join(", ")
        ),
    };
    let what = if form == Form::Function {
        "function"
    } else {
        "operator"
    };
    match why {
        Unresolved::Error(error) => error,
        Unresolved::NoMatch => {
            let message = match form {
                Form::Function => format!("function {signature} does not exist"),
                _ => format!("operator does not exist: {signature}"),
            };
            SqlError::new(SqlState::UNDEFINED_FUNCTION, message).with_hint(format!(
                "No {what} matches the given name and argument types. You might need to add explicit type casts."
            ))
        }
        Unresolved::Ambiguous => {
            let message = match form {
                Form::Function => format!("function {signature} is not unique"),
                _ => format!("operator is not unique: {signature}"),
            };
            SqlError::new(SqlState::AMBIGUOUS_FUNCTION, message).with_hint(format!(
                "Could not choose a best candidate {what}. You might need to add explicit type casts."
            ))
        }
    }
}
