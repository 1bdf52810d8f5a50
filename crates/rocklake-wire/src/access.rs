//! Which users may connect to which databases: the database and user
//! columns of PostgreSQL's `pg_hba.conf`, read from a file given to
//! `rocklake serve --database-access`.
//!
//! One rule per line: `DATABASE USER`, each a comma-separated list of names
//! or `all`; blank lines and `#` comments are ignored. A connection is let
//! through to authentication when a rule matches its database and user, and
//! refused with FATAL 28000 otherwise, as PostgreSQL refuses a connection no
//! `pg_hba.conf` line matches.

/// The access rules (see the module docs).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AccessRules {
    rules: Vec<(Names, Names)>,
}

/// One column of a rule.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Names {
    All,
    These(Vec<String>),
}

impl Names {
    fn parse(field: &str) -> Names {
        if field == "all" {
            return Names::All;
        }
        Names::These(field.split(',').map(str::to_string).collect())
    }

    fn matches(&self, name: &str) -> bool {
        match self {
            Names::All => true,
            Names::These(names) => names.iter().any(|n| n == name),
        }
    }
}

impl AccessRules {
    /// Reads rules from the text of an access file; errors name the line.
    pub fn parse(text: &str) -> Result<AccessRules, String> {
        let mut rules = Vec::new();
        for (number, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let fields: Vec<&str> = line.split_whitespace().collect();
            let [database, user] = fields.as_slice() else {
                return Err(format!(
                    "line {}: expected `DATABASE USER`, found {line:?}",
                    number + 1
                ));
            };
            rules.push((Names::parse(database), Names::parse(user)));
        }
        Ok(AccessRules { rules })
    }

    /// Whether `user` may connect to `database`.
    pub fn allows(&self, database: &str, user: &str) -> bool {
        self.rules
            .iter()
            .any(|(databases, users)| databases.matches(database) && users.matches(user))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_match_database_and_user() {
        let rules = AccessRules::parse(
            "# who may use what\nsales alice,bob\nall admin\n\nmarketing carol # team lead\n",
        )
        .unwrap();
        assert!(rules.allows("sales", "alice"));
        assert!(rules.allows("sales", "bob"));
        assert!(!rules.allows("marketing", "alice"));
        assert!(rules.allows("marketing", "carol"));
        assert!(rules.allows("anything", "admin"));
        assert!(!rules.allows("sales", "carol"));
        assert!(AccessRules::parse("sales").is_err());
        assert!(!AccessRules::default().allows("sales", "alice"));
    }
}
