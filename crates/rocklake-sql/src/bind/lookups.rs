//! Catalog queries read a few relations' rows out of virtual tables that
//! hold every relation's (DuckDB's table lookup joins `pg_class`,
//! `pg_attribute`, `pg_type` and `pg_constraint` for one `relname`). Two
//! plan changes let them build only those rows:
//! - the WHERE clause's simple conditions on the first FROM item become its
//!   scan's bounds, so a virtual table keyed by the bounded column builds
//!   only the rows with those values (`relname = 'x'`);
//! - a virtual table joined on a keyed column ([`crate::catalog::VirtualTable::is_keyed`]:
//!   `pg_attribute.attrelid`, `pg_type.oid`, ...) is looked up per left
//!   row ([`FromPlan::Lookup`]) instead of built whole and hashed.

use crate::bind::Binder;
use crate::plan::{BExpr, FromPlan, JoinKind, ScanSource};

impl Binder<'_> {
    /// Applies both changes to a SELECT's FROM clause with WHERE `filter`.
    pub(super) fn plan_catalog_lookups(&mut self, from: &mut FromPlan, filter: Option<&BExpr>) {
        if let (Some(filter), FromPlan::Join { .. }) = (filter, &*from) {
            if let Some(scan) = self.first_virtual_scan(from) {
                self.push_down(scan, filter);
            }
        }
        self.use_lookups(from);
    }

    /// The scan of the FROM clause's first item when it is a virtual table
    /// whose rows no outer join can null-extend (the left end of a chain of
    /// inner and left joins) and the clause's rows start at the query
    /// level's first column.
    fn first_virtual_scan(&self, from: &FromPlan) -> Option<usize> {
        let FromPlan::Join {
            left_width,
            right_width,
            ..
        } = from
        else {
            return None;
        };
        if *left_width + *right_width != self.scopes.last().map_or(0, |s| s.width) {
            return None;
        }
        let mut first = from;
        while let FromPlan::Join {
            left,
            kind: JoinKind::Inner | JoinKind::Left,
            ..
        } = first
        {
            first = left;
        }
        let FromPlan::Scan(id) = first else {
            return None;
        };
        matches!(self.scans[*id].source, ScanSource::Virtual(_)).then_some(*id)
    }

    /// Turns the right input of inner and left joins into a
    /// [`FromPlan::Lookup`] where it is a whole virtual table joined on a
    /// keyed column.
    fn use_lookups(&mut self, from: &mut FromPlan) {
        let FromPlan::Join {
            left,
            right,
            kind,
            equi,
            ..
        } = from
        else {
            return;
        };
        self.use_lookups(left);
        self.use_lookups(right);
        if !matches!(kind, JoinKind::Inner | JoinKind::Left) {
            return;
        }
        let FromPlan::Scan(id) = **right else {
            return;
        };
        let scan = &self.scans[id];
        let ScanSource::Virtual(table) = scan.source else {
            return;
        };
        if !scan.filter.bounds.is_empty() || !scan.keyed_by.is_empty() {
            return;
        }
        let Some(&(_, column)) = equi.iter().find(|(_, r)| table.is_keyed(*r)) else {
            return;
        };
        self.scans[id].looked_up = true;
        **right = FromPlan::Lookup {
            table,
            column,
            columns: None,
        };
    }
}

#[cfg(test)]
mod tests {
    use sqlparser::ast::Statement;

    use crate::bind::Binder;
    use crate::catalog::{Catalog, VirtualTable};
    use crate::plan::{FromPlan, QueryPlan, SetPlan};
    use crate::storage::ColumnBound;

    fn bind(sql: &str) -> (QueryPlan, Vec<crate::plan::ScanReq>) {
        let cat = Catalog::default();
        let Some(Statement::Query(query)) = crate::parse::parse(sql).unwrap().pop() else {
            panic!("not a query");
        };
        let mut binder = Binder::new(&cat, 0, 0);
        let plan = binder.bind_query(&query).unwrap();
        (plan, binder.scans)
    }

    /// The right inputs of a left-deep join chain, top first.
    fn rights(plan: &FromPlan) -> Vec<&FromPlan> {
        match plan {
            FromPlan::Join { left, right, .. } => {
                let mut out = vec![right.as_ref()];
                out.extend(rights(left));
                out
            }
            _ => Vec::new(),
        }
    }

    #[test]
    fn a_table_lookup_bounds_its_first_table_and_looks_up_the_joined_ones() {
        let (plan, scans) = bind(
            "SELECT relname, attname, typname FROM pg_class c \
             JOIN pg_namespace n ON c.relnamespace = n.oid \
             JOIN pg_attribute a ON c.oid = a.attrelid \
             JOIN pg_type t ON a.atttypid = t.oid \
             LEFT JOIN pg_description d ON d.objoid = c.oid \
             WHERE a.attnum > 0 AND c.relname = 'x' AND n.nspname IN ('public')",
        );
        let SetPlan::Select(select) = plan.body else {
            panic!("not a SELECT");
        };
        let kinds: Vec<String> = rights(&select.from)
            .into_iter()
            .map(|right| match right {
                FromPlan::Scan(_) => "scan".to_string(),
                FromPlan::Lookup { table, .. } => format!("lookup {table:?}"),
                _ => "other".to_string(),
            })
            .collect();
        // pg_description is not keyed by objoid, pg_namespace not by oid.
        assert_eq!(
            kinds,
            vec!["scan", "lookup Type", "lookup Attribute", "scan"],
            "{:?}",
            select.from
        );
        assert_eq!(
            scans[0].filter.bounds,
            vec![(1, ColumnBound::Eq(rocklake_types::Datum::text("x")))]
        );
        assert!(scans[2].looked_up && scans[3].looked_up && !scans[1].looked_up);
        assert!(matches!(
            scans[0].source,
            crate::plan::ScanSource::Virtual(VirtualTable::Class)
        ));
    }

    #[test]
    fn an_input_joined_on_a_column_that_is_not_keyed_is_scanned() {
        let (plan, scans) = bind(
            "SELECT 1 FROM pg_namespace n JOIN pg_class c ON c.relnamespace = n.oid \
             JOIN pg_class c2 ON c2.oid = c.oid",
        );
        let SetPlan::Select(select) = plan.body else {
            panic!("not a SELECT");
        };
        // pg_class is keyed by oid, not by relnamespace.
        assert!(matches!(rights(&select.from)[1], FromPlan::Scan(_)));
        assert!(matches!(rights(&select.from)[0], FromPlan::Lookup { .. }));
        assert!(scans.iter().all(|s| s.filter.bounds.is_empty()));
    }
}
