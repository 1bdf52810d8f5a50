//! The names PostgreSQL gives result columns of unaliased expressions
//! (`FigureColname`).

use sqlparser::ast::{Expr, ObjectNamePart, SelectItem, SetExpr};

use super::expr;
use crate::ident::fold;

/// The output column name PostgreSQL gives an unaliased expression.
pub fn figure_colname(e: &Expr) -> String {
    colname_and_strength(e).0
}

/// PostgreSQL's `FigureColnameInternal`: a name and how strongly it names
/// the column (2: a column, function, `array`, ...; 1: a cast's type or
/// `case`; 0: none, `?column?`). A cast keeps its operand's name unless that
/// is weaker than a type's.
fn colname_and_strength(e: &Expr) -> (String, u8) {
    match e {
        Expr::Identifier(id) => (fold(id), 2),
        Expr::CompoundIdentifier(ids) => (ids.last().map(fold).unwrap_or_default(), 2),
        Expr::Nested(inner) | Expr::Collate { expr: inner, .. } => colname_and_strength(inner),
        Expr::Function(f) => (
            f.name
                .0
                .last()
                .map(|p| match p {
                    ObjectNamePart::Identifier(id) => fold(id),
                    other => other.to_string(),
                })
                .unwrap_or_default(),
            2,
        ),
        Expr::Array(_) => ("array".into(), 2),
        Expr::Trim { trim_where, .. } => (expr::trim_name(trim_where.as_ref()).to_string(), 2),
        // `t.col[i]` and `(x).field`: the last `.name`, else the root's.
        Expr::CompoundFieldAccess { root, access_chain } => access_chain
            .iter()
            .rev()
            .find_map(|a| match a {
                sqlparser::ast::AccessExpr::Dot(Expr::Identifier(id)) => Some((fold(id), 2)),
                _ => None,
            })
            .unwrap_or_else(|| colname_and_strength(root)),
        Expr::Cast {
            expr, data_type, ..
        } => {
            let (inner, strength) = colname_and_strength(expr);
            if strength > 1 {
                return (inner, strength);
            }
            match crate::bind::expr::pg_type_of(data_type) {
                // An array type is named by its element type, as written.
                Ok(t) => (t.element_type().unwrap_or(t).type_name().to_string(), 1),
                Err(_) => (inner, strength),
            }
        }
        // As PostgreSQL: the ELSE result's name when it has a real one (a
        // column, a function, a cast of either), else `case`.
        Expr::Case { else_result, .. } => else_result
            .as_deref()
            .filter(|result| colname_and_strength(result).1 > 1)
            .map_or_else(|| ("case".into(), 1), colname_and_strength),
        Expr::Exists { .. } => ("exists".into(), 2),
        Expr::Subquery(q) => match q.body.as_ref() {
            SetExpr::Select(s) => match s.projection.first() {
                Some(SelectItem::UnnamedExpr(x)) => colname_and_strength(x),
                Some(SelectItem::ExprWithAlias { alias, .. }) => (fold(alias), 2),
                _ => ("?column?".into(), 0),
            },
            _ => ("?column?".into(), 0),
        },
        Expr::Substring { .. } => ("substring".into(), 2),
        _ => ("?column?".into(), 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlparser::dialect::PostgreSqlDialect;
    use sqlparser::parser::Parser;

    fn expr(sql: &str) -> Expr {
        Parser::new(&PostgreSqlDialect {})
            .try_with_sql(sql)
            .unwrap()
            .parse_expr()
            .unwrap()
    }

    #[test]
    fn column_names_follow_postgres() {
        assert_eq!(figure_colname(&expr("\"Foo\"")), "Foo");
        assert_eq!(figure_colname(&expr("t.Bar")), "bar");
        assert_eq!(figure_colname(&expr("COUNT(*)")), "count");
        assert_eq!(figure_colname(&expr("CAST(x AS BOOLEAN)")), "x");
        assert_eq!(figure_colname(&expr("'1'::int4")), "int4");
        assert_eq!(figure_colname(&expr("1 + 2")), "?column?");
        assert_eq!(figure_colname(&expr("CASE WHEN true THEN 1 END")), "case");
        assert_eq!(
            figure_colname(&expr("CASE WHEN true THEN 1 ELSE 2 END")),
            "case"
        );
        assert_eq!(
            figure_colname(&expr("CASE WHEN x = 0 THEN '' ELSE x::regtype::text END")),
            "x"
        );
        assert_eq!(
            figure_colname(&expr("CASE WHEN b THEN 1 ELSE '2'::int END")),
            "case"
        );
        assert_eq!(figure_colname(&expr("(SELECT max(a) FROM t)")), "max");
    }
}
