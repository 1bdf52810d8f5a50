//! Array values in expressions: constructors, subscripts, `op ANY/ALL
//! (array)`, and the array functions.

use rocklake_types::datum::Datum;

use crate::exec::compare::cmp_holds;
use crate::exec::compare::compare;
use crate::plan::{CmpOp, Func};

/// The subscript of an array's first element: 1, or 0 for the vectors
/// (`int2vector`, `oidvector`).
pub(crate) fn lower_bound(array: &Datum) -> i64 {
    match array {
        Datum::Vector(_) => 0,
        _ => 1,
    }
}

/// `array[index]`: the element, NULL outside the array.
pub(crate) fn subscript(array: &Datum, index: &Datum) -> Datum {
    let (Some(items), Some(index)) = (array.elements(), index.as_i64()) else {
        return Datum::Null;
    };
    usize::try_from(index - lower_bound(array))
        .ok()
        .and_then(|at| items.get(at))
        .cloned()
        .unwrap_or(Datum::Null)
}

/// `x op ANY (array)` (`all` false) or `x op ALL (array)`, with SQL's
/// three-valued logic over the elements.
pub(crate) fn any_all(op: CmpOp, value: &Datum, array: &Datum, all: bool) -> Datum {
    let Some(items) = array.elements() else {
        return Datum::Null;
    };
    let mut saw_null = false;
    for item in items {
        if value.is_null() || item.is_null() {
            saw_null = true;
            continue;
        }
        let holds = cmp_holds(op, compare(value, item));
        if holds != all {
            return Datum::Bool(!all);
        }
    }
    if saw_null {
        Datum::Null
    } else {
        Datum::Bool(all)
    }
}

/// `array_cat`, `array_append`, `array_prepend` (a NULL array counts as
/// empty; two NULL arrays give NULL).
pub(crate) fn concatenate(f: Func, vals: Vec<Datum>) -> Datum {
    let mut vals = vals.into_iter();
    let (a, b) = (
        vals.next().unwrap_or(Datum::Null),
        vals.next().unwrap_or(Datum::Null),
    );
    let items = |d: &Datum| d.elements().map(<[Datum]>::to_vec).unwrap_or_default();
    match f {
        Func::ArrayAppend => {
            let mut v = items(&a);
            v.push(b);
            Datum::array(v)
        }
        Func::ArrayPrepend => {
            let mut v = vec![a];
            v.extend(items(&b));
            Datum::array(v)
        }
        _ if a.is_null() && b.is_null() => Datum::Null,
        _ => Datum::array([items(&a), items(&b)].concat()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ints(v: &[Option<i32>]) -> Datum {
        Datum::array(
            v.iter()
                .map(|x| x.map_or(Datum::Null, Datum::Int4))
                .collect::<Vec<_>>(),
        )
    }

    #[test]
    fn any_and_all_follow_three_valued_logic() {
        let one = Datum::Int4(1);
        assert_eq!(
            any_all(CmpOp::Eq, &one, &ints(&[Some(2), Some(1)]), false),
            Datum::Bool(true)
        );
        assert_eq!(
            any_all(CmpOp::Eq, &one, &ints(&[Some(2), None]), false),
            Datum::Null
        );
        assert_eq!(
            any_all(CmpOp::Eq, &one, &ints(&[]), false),
            Datum::Bool(false)
        );
        assert_eq!(
            any_all(CmpOp::Eq, &Datum::Null, &ints(&[]), true),
            Datum::Bool(true)
        );
        assert_eq!(
            any_all(CmpOp::Lt, &one, &ints(&[Some(2), Some(3)]), true),
            Datum::Bool(true)
        );
        assert_eq!(
            any_all(CmpOp::Lt, &one, &ints(&[Some(0), None]), true),
            Datum::Bool(false)
        );
        assert_eq!(
            any_all(CmpOp::Lt, &one, &ints(&[Some(2), None]), true),
            Datum::Null
        );
    }

    #[test]
    fn subscripts_follow_the_lower_bound() {
        let array = ints(&[Some(5), Some(6)]);
        assert_eq!(subscript(&array, &Datum::Int4(1)), Datum::Int4(5));
        assert_eq!(subscript(&array, &Datum::Int4(0)), Datum::Null);
        let vector = Datum::Vector(vec![Datum::Int2(5), Datum::Int2(6)].into());
        assert_eq!(subscript(&vector, &Datum::Int4(0)), Datum::Int2(5));
    }
}
