//! `CREATE ROLE` / `USER` / `GROUP`, `ALTER ROLE`, `DROP ROLE`, and
//! `GRANT` / `REVOKE` of role memberships, with PostgreSQL 15's checks
//! (`CreateRole`, `AlterRole`, `AlterRoleSet`, `RenameRole`, `DropRole`,
//! `AddRoleMems`, `DelRoleMems`) made on the latest roles, inside the
//! change that is stored.

use rocklake_types::output::{Notice, QueryOutput};
use rocklake_types::roles::{Membership, RoleCatalog, RoleDef, RoleSetting, BOOTSTRAP_ROLE};
use rocklake_types::{SqlError, SqlState};
use sqlparser::ast::{
    AlterRoleOperation, CreateRole, Expr, GrantRole, Grantee, GranteeName, Ident, ObjectName,
    Password, ResetConfig, RevokeRole, RoleOption, SetConfigValue, Value,
};

use super::{denied, no_such_role, Roles, SessionRoles};
use crate::ident::{fold, name_parts};

/// Role names PostgreSQL reserves: `pg_` for its predefined roles, and the
/// pseudo-roles `public` and `none`.
fn check_reserved(name: &str) -> Result<(), SqlError> {
    let reserved = || {
        SqlError::new(
            SqlState::RESERVED_NAME,
            format!("role name \"{name}\" is reserved"),
        )
    };
    if name.starts_with("pg_") {
        return Err(reserved().with_detail("Role names starting with \"pg_\" are reserved."));
    }
    if name == "public" || name == "none" {
        return Err(reserved());
    }
    Ok(())
}

/// The role a one-part name names.
fn single_name(name: &ObjectName) -> Result<String, SqlError> {
    match name_parts(name)?.as_slice() {
        [one] => Ok(one.clone()),
        _ => Err(SqlError::new(
            SqlState::SYNTAX_ERROR,
            format!("syntax error at or near \"{name}\""),
        )),
    }
}

/// The role a role specification names: `CURRENT_USER`, `SESSION_USER`,
/// `CURRENT_ROLE` or a name.
fn role_spec(id: &Ident, me: &SessionRoles) -> String {
    if id.quote_style.is_none() {
        match id.value.to_ascii_lowercase().as_str() {
            "current_user" | "current_role" => return me.current().to_string(),
            "session_user" => return me.session().to_string(),
            _ => {}
        }
    }
    fold(id)
}

fn grantee_name(grantee: &Grantee, me: &SessionRoles) -> Result<String, SqlError> {
    match &grantee.name {
        Some(GranteeName::ObjectName(name)) => match name.0.as_slice() {
            [part] => match part.as_ident() {
                Some(id) => Ok(role_spec(id, me)),
                None => single_name(name),
            },
            _ => single_name(name),
        },
        _ => Err(SqlError::unsupported(format!("grantee {grantee}"))),
    }
}

/// A password literal: `Some(text)`, or `None` for `PASSWORD NULL`.
fn password_text(password: &Password) -> Result<Option<String>, SqlError> {
    match password {
        Password::NullPassword => Ok(None),
        Password::Password(Expr::Value(v)) => match &v.value {
            Value::SingleQuotedString(s) | Value::EscapedStringLiteral(s) => Ok(Some(s.clone())),
            Value::Null => Ok(None),
            other => Err(SqlError::new(
                SqlState::SYNTAX_ERROR,
                format!("syntax error at or near \"{other}\""),
            )),
        },
        Password::Password(other) => Err(SqlError::new(
            SqlState::SYNTAX_ERROR,
            format!("syntax error at or near \"{other}\""),
        )),
    }
}

/// The verifier to keep for a password: a SCRAM-SHA-256 verifier given as
/// the password is kept as it is (as PostgreSQL does); an MD5 hash is
/// refused (RockLake authenticates with SCRAM only); anything else is
/// hashed.
fn verifier(roles: &dyn Roles, password: Option<String>) -> Result<Option<String>, SqlError> {
    match password {
        None => Ok(None),
        Some(text) if text.starts_with("SCRAM-SHA-256$") => Ok(Some(text)),
        Some(text) if text.len() == 35 && text.starts_with("md5") => Err(SqlError::unsupported(
            "MD5 password hashes: RockLake authenticates with SCRAM-SHA-256 only",
        )),
        Some(text) if text.is_empty() => Ok(None),
        Some(text) => roles.password_verifier(&text).map(Some),
    }
}

fn connection_limit(expr: &Expr) -> Result<i32, SqlError> {
    let text = match expr {
        Expr::Value(v) => v.value.to_string(),
        Expr::UnaryOp { op, expr } => format!("{op}{expr}"),
        other => other.to_string(),
    };
    let limit: i32 = text.parse().map_err(|_| {
        SqlError::new(
            SqlState::SYNTAX_ERROR,
            format!("syntax error at or near \"{text}\""),
        )
    })?;
    if limit < -1 {
        return Err(SqlError::new(
            SqlState::INVALID_PARAMETER_VALUE,
            format!("invalid connection limit: {limit}"),
        ));
    }
    Ok(limit)
}

/// `VALID UNTIL`: only `'infinity'` (no expiry) is taken.
fn check_valid_until(expr: &Expr) -> Result<(), SqlError> {
    match expr {
        Expr::Value(v) if matches!(&v.value, Value::SingleQuotedString(s) if s.eq_ignore_ascii_case("infinity")) => {
            Ok(())
        }
        _ => Err(SqlError::unsupported(
            "VALID UNTIL other than 'infinity': RockLake's passwords do not expire",
        )),
    }
}

/// The attributes a statement asks for, `None` where it does not say.
#[derive(Default)]
struct Attributes {
    superuser: Option<bool>,
    createdb: Option<bool>,
    createrole: Option<bool>,
    login: Option<bool>,
    inherit: Option<bool>,
    replication: Option<bool>,
    bypassrls: Option<bool>,
    connection_limit: Option<i32>,
    password: Option<Option<String>>,
}

impl Attributes {
    fn from_options(roles: &dyn Roles, options: &[RoleOption]) -> Result<Attributes, SqlError> {
        let mut a = Attributes::default();
        for option in options {
            match option {
                RoleOption::SuperUser(v) => a.superuser = Some(*v),
                RoleOption::CreateDB(v) => a.createdb = Some(*v),
                RoleOption::CreateRole(v) => a.createrole = Some(*v),
                RoleOption::Login(v) => a.login = Some(*v),
                RoleOption::Inherit(v) => a.inherit = Some(*v),
                RoleOption::Replication(v) => a.replication = Some(*v),
                RoleOption::BypassRLS(v) => a.bypassrls = Some(*v),
                RoleOption::ConnectionLimit(e) => a.connection_limit = Some(connection_limit(e)?),
                RoleOption::Password(p) => a.password = Some(verifier(roles, password_text(p)?)?),
                RoleOption::ValidUntil(e) => check_valid_until(e)?,
            }
        }
        Ok(a)
    }

    fn apply(&self, role: &mut RoleDef) {
        let set = |field: &mut bool, value: Option<bool>| {
            if let Some(value) = value {
                *field = value;
            }
        };
        set(&mut role.superuser, self.superuser);
        set(&mut role.createdb, self.createdb);
        set(&mut role.createrole, self.createrole);
        set(&mut role.login, self.login);
        set(&mut role.inherit, self.inherit);
        set(&mut role.replication, self.replication);
        set(&mut role.bypassrls, self.bypassrls);
        if let Some(limit) = self.connection_limit {
            role.connection_limit = limit;
        }
        if let Some(password) = &self.password {
            role.verifier = password.clone();
        }
    }
}

/// `CREATE ROLE` / `CREATE USER` / `CREATE GROUP`.
pub(crate) async fn create_role(
    roles: &dyn Roles,
    me: &SessionRoles,
    create: &CreateRole,
) -> Result<QueryOutput, SqlError> {
    if create.authorization_owner.is_some() || create.if_not_exists {
        return Err(SqlError::new(
            SqlState::SYNTAX_ERROR,
            format!("syntax error in {create}"),
        ));
    }
    let [name] = create.names.as_slice() else {
        return Err(SqlError::new(
            SqlState::SYNTAX_ERROR,
            "syntax error at or near \",\"",
        ));
    };
    let name = single_name(name)?;
    check_reserved(&name)?;
    let mut options = Vec::new();
    let flags = [
        (
            create.superuser,
            RoleOption::SuperUser as fn(bool) -> RoleOption,
        ),
        (create.create_db, RoleOption::CreateDB),
        (create.create_role, RoleOption::CreateRole),
        (create.inherit, RoleOption::Inherit),
        (create.replication, RoleOption::Replication),
        (create.bypassrls, RoleOption::BypassRLS),
    ];
    for (value, option) in flags {
        if let Some(value) = value {
            options.push(option(value));
        }
    }
    if let Some(login) = create.login {
        options.push(RoleOption::Login(login));
    }
    if let Some(password) = &create.password {
        options.push(RoleOption::Password(password.clone()));
    }
    if let Some(limit) = &create.connection_limit {
        options.push(RoleOption::ConnectionLimit(limit.clone()));
    }
    if let Some(until) = &create.valid_until {
        options.push(RoleOption::ValidUntil(until.clone()));
    }
    let attributes = Attributes::from_options(roles, &options)?;
    let in_roles: Vec<String> = create
        .in_role
        .iter()
        .chain(&create.in_group)
        .map(|id| role_spec(id, me))
        .collect();
    let members: Vec<(String, bool)> = create
        .role
        .iter()
        .chain(&create.user)
        .map(|id| (role_spec(id, me), false))
        .chain(create.admin.iter().map(|id| (role_spec(id, me), true)))
        .collect();
    let enforced = roles.enforced();
    let notices = roles
        .update(&|catalog: &mut RoleCatalog| {
            let who = me.who(catalog, enforced);
            let superuser_only = [
                (
                    attributes.superuser,
                    "must be superuser to create superusers",
                ),
                (
                    attributes.replication,
                    "must be superuser to create replication users",
                ),
                (
                    attributes.bypassrls,
                    "must be superuser to create bypassrls users",
                ),
            ];
            for (asked, message) in superuser_only {
                if asked == Some(true) && !who.is_superuser() {
                    return Err(denied(message));
                }
            }
            if !who.may_create_roles() {
                return Err(denied("permission denied to create role"));
            }
            if catalog.role(&name).is_some() {
                return Err(SqlError::new(
                    SqlState::DUPLICATE_OBJECT,
                    format!("role \"{name}\" already exists"),
                ));
            }
            let mut role = catalog.new_role(&name);
            attributes.apply(&mut role);
            catalog.insert(role);
            let mut notices = Vec::new();
            for granted in &in_roles {
                notices.extend(add_member(catalog, me, enforced, granted, &name, false)?);
            }
            for (member, admin) in &members {
                notices.extend(add_member(catalog, me, enforced, &name, member, *admin)?);
            }
            Ok(notices)
        })
        .await?;
    Ok(QueryOutput::Command {
        tag: "CREATE ROLE".into(),
        notices,
    })
}

/// `ALTER ROLE name ...`.
pub(crate) async fn alter_role(
    roles: &dyn Roles,
    me: &SessionRoles,
    name: &Ident,
    operation: &AlterRoleOperation,
) -> Result<QueryOutput, SqlError> {
    let name = role_spec(name, me);
    let enforced = roles.enforced();
    let notices = match operation {
        AlterRoleOperation::WithOptions { options } => {
            let attributes = Attributes::from_options(roles, options)?;
            let only_own_password =
                attributes.password.is_some() && options.len() == 1 && name == me.current();
            roles
                .update(&|catalog: &mut RoleCatalog| {
                    let who = me.who(catalog, enforced);
                    let role = catalog.role(&name).ok_or_else(|| no_such_role(&name))?;
                    if role.superuser || attributes.superuser.is_some() {
                        if !who.is_superuser() {
                            return Err(denied(
                                "must be superuser to alter superuser roles or change superuser attribute",
                            ));
                        }
                    } else if role.replication || attributes.replication.is_some() {
                        if !who.is_superuser() {
                            return Err(denied(
                                "must be superuser to alter replication roles or change replication attribute",
                            ));
                        }
                    } else if attributes.bypassrls.is_some() {
                        if !who.is_superuser() {
                            return Err(denied("must be superuser to change bypassrls attribute"));
                        }
                    } else if !who.may_create_roles() && !only_own_password {
                        return Err(denied("permission denied"));
                    }
                    // PostgreSQL 16's rule (15 lets the last way back in go).
                    if name == BOOTSTRAP_ROLE && attributes.superuser == Some(false) {
                        return Err(denied("permission denied to alter role")
                            .with_detail("The bootstrap user must have the SUPERUSER attribute."));
                    }
                    let role = catalog.role_mut(&name).ok_or_else(|| no_such_role(&name))?;
                    attributes.apply(role);
                    Ok(Vec::new())
                })
                .await?
        }
        AlterRoleOperation::Set {
            config_name,
            config_value,
            in_database,
        } => {
            let setting = name_parts(config_name)?.join(".");
            let database = in_database.as_ref().map(single_name).transpose()?;
            let value = match config_value {
                SetConfigValue::Default => None,
                SetConfigValue::FromCurrent => {
                    return Err(SqlError::unsupported("ALTER ROLE ... SET ... FROM CURRENT"))
                }
                SetConfigValue::Value(expr) => Some(setting_value(&setting, expr)?),
            };
            change_settings(roles, me, &name, database, Some(setting), value).await?
        }
        AlterRoleOperation::Reset {
            config_name,
            in_database,
        } => {
            let database = in_database.as_ref().map(single_name).transpose()?;
            let setting = match config_name {
                ResetConfig::ALL => None,
                ResetConfig::ConfigName(name) => Some(name_parts(name)?.join(".")),
            };
            change_settings(roles, me, &name, database, setting, None).await?
        }
        AlterRoleOperation::RenameRole { role_name } => {
            let new = fold(role_name);
            rename_role(roles, me, &name, &new).await?;
            return Ok(QueryOutput::command("ALTER ROLE"));
        }
        other => return Err(SqlError::unsupported(format!("ALTER ROLE ... {other}"))),
    };
    Ok(QueryOutput::Command {
        tag: "ALTER ROLE".into(),
        notices,
    })
}

/// The value `ALTER ROLE ... SET name = value` stores, as `SET` would take
/// it (so a value the setting cannot take fails now, not at login).
fn setting_value(setting: &str, expr: &Expr) -> Result<String, SqlError> {
    let text = match expr {
        Expr::Value(v) => v
            .value
            .clone()
            .into_string()
            .unwrap_or_else(|| v.to_string()),
        Expr::Identifier(id) => id.value.clone(),
        other => other.to_string(),
    };
    rocklake_types::settings::canonical_value(setting, &text)
}

/// `ALTER ROLE ... [IN DATABASE d] SET name = value` (`value` `Some`),
/// `... SET name TO DEFAULT` / `RESET name` (`None`), `RESET ALL`
/// (`setting` `None`).
async fn change_settings(
    roles: &dyn Roles,
    me: &SessionRoles,
    name: &str,
    database: Option<String>,
    setting: Option<String>,
    value: Option<String>,
) -> Result<Vec<Notice>, SqlError> {
    let enforced = roles.enforced();
    roles
        .update(&|catalog: &mut RoleCatalog| {
            let who = me.who(catalog, enforced);
            let role = catalog.role(name).ok_or_else(|| no_such_role(name))?;
            if role.superuser {
                if !who.is_superuser() {
                    return Err(denied("must be superuser to alter superusers"));
                }
            } else if !who.may_create_roles() && name != me.current() {
                return Err(denied("permission denied"));
            }
            let role = catalog.role_mut(name).ok_or_else(|| no_such_role(name))?;
            role.settings.retain(|s| {
                s.database != database
                    || setting
                        .as_ref()
                        .is_some_and(|wanted| !s.name.eq_ignore_ascii_case(wanted))
            });
            if let (Some(setting), Some(value)) = (&setting, &value) {
                role.settings.push(RoleSetting {
                    database: database.clone(),
                    name: setting.to_ascii_lowercase(),
                    value: value.clone(),
                });
            }
            Ok(Vec::new())
        })
        .await
}

/// `ALTER ROLE name RENAME TO new`.
async fn rename_role(
    roles: &dyn Roles,
    me: &SessionRoles,
    name: &str,
    new: &str,
) -> Result<(), SqlError> {
    if name == me.session() {
        return Err(SqlError::unsupported("session user cannot be renamed"));
    }
    if name == me.current() {
        return Err(SqlError::unsupported("current user cannot be renamed"));
    }
    check_reserved(new)?;
    let enforced = roles.enforced();
    roles
        .update(&|catalog: &mut RoleCatalog| {
            let who = me.who(catalog, enforced);
            let role = catalog.role(name).ok_or_else(|| no_such_role(name))?;
            if catalog.role(new).is_some() {
                return Err(SqlError::new(
                    SqlState::DUPLICATE_OBJECT,
                    format!("role \"{new}\" already exists"),
                ));
            }
            if role.superuser {
                if !who.is_superuser() {
                    return Err(denied("must be superuser to rename superusers"));
                }
            } else if !who.may_create_roles() {
                return Err(denied("permission denied to rename role"));
            }
            if name == BOOTSTRAP_ROLE {
                return Err(SqlError::unsupported(
                    "renaming the bootstrap superuser: RockLake's root keeps its name",
                ));
            }
            let mut role = catalog.remove(name).ok_or_else(|| no_such_role(name))?;
            role.name = new.to_string();
            catalog.insert(role);
            for other in &mut catalog.roles {
                for membership in &mut other.member_of {
                    if membership.role == name {
                        membership.role = new.to_string();
                    }
                }
            }
            for owner in catalog.owners.values_mut() {
                if owner == name {
                    *owner = new.to_string();
                }
            }
            Ok(Vec::new())
        })
        .await?;
    Ok(())
}

/// `DROP ROLE [IF EXISTS] name, ...`.
pub(crate) async fn drop_roles(
    roles: &dyn Roles,
    me: &SessionRoles,
    names: &[ObjectName],
    if_exists: bool,
) -> Result<QueryOutput, SqlError> {
    let names = names
        .iter()
        .map(single_name)
        .collect::<Result<Vec<_>, _>>()?;
    for name in &names {
        if name == me.current() {
            return Err(SqlError::new(
                SqlState::OBJECT_IN_USE,
                "current user cannot be dropped",
            ));
        }
        if name == me.session() {
            return Err(SqlError::new(
                SqlState::OBJECT_IN_USE,
                "session user cannot be dropped",
            ));
        }
    }
    let enforced = roles.enforced();
    let notices = roles
        .update(&|catalog: &mut RoleCatalog| {
            if !me.who(catalog, enforced).may_create_roles() {
                return Err(denied("permission denied to drop role"));
            }
            let mut notices = Vec::new();
            for name in &names {
                let who = me.who(catalog, enforced);
                let Some(role) = catalog.role(name) else {
                    if if_exists {
                        notices.push(Notice {
                            code: SqlState::SUCCESSFUL_COMPLETION,
                            message: format!("role \"{name}\" does not exist, skipping"),
                        });
                        continue;
                    }
                    return Err(no_such_role(name));
                };
                if role.superuser && !who.is_superuser() {
                    return Err(denied("must be superuser to drop superusers"));
                }
                if name == BOOTSTRAP_ROLE {
                    return Err(SqlError::new(
                        SqlState::OBJECT_IN_USE,
                        format!(
                            "cannot drop role {name} because it is required by the database system"
                        ),
                    ));
                }
                let owned: Vec<String> = catalog
                    .owners
                    .iter()
                    .filter(|(_, owner)| *owner == name)
                    .map(|(database, _)| format!("owner of database {database}"))
                    .collect();
                if !owned.is_empty() {
                    return Err(SqlError::new(
                        SqlState::DEPENDENT_OBJECTS_STILL_EXIST,
                        format!(
                            "role \"{name}\" cannot be dropped because some objects depend on it"
                        ),
                    )
                    .with_detail(owned.join("\n")));
                }
                catalog.remove(name);
                for other in &mut catalog.roles {
                    other.member_of.retain(|m| m.role != *name);
                }
            }
            Ok(notices)
        })
        .await?;
    Ok(QueryOutput::Command {
        tag: "DROP ROLE".into(),
        notices,
    })
}

/// Makes `member` a member of `granted` (PostgreSQL's `AddRoleMems`), on
/// `catalog`: the acting role must be a superuser for a superuser role,
/// else have `CREATEROLE` or the admin option; no cycles.
fn add_member(
    catalog: &mut RoleCatalog,
    me: &SessionRoles,
    enforced: bool,
    granted: &str,
    member: &str,
    admin: bool,
) -> Result<Vec<Notice>, SqlError> {
    let who = me.who(catalog, enforced);
    let granted_role = catalog.role(granted).ok_or_else(|| no_such_role(granted))?;
    if granted_role.superuser {
        if !who.is_superuser() {
            return Err(denied("must be superuser to alter superusers"));
        }
    } else if !who.may_create_roles() && !who.is_admin_of(granted) {
        return Err(denied(format!(
            "must have admin option on role \"{granted}\""
        )));
    }
    if catalog.role(member).is_none() {
        return Err(no_such_role(member));
    }
    if catalog.reaches(granted, member, false) {
        return Err(SqlError::new(
            SqlState::INVALID_GRANT_OPERATION,
            format!("role \"{granted}\" is a member of role \"{member}\""),
        ));
    }
    let role = catalog
        .role_mut(member)
        .ok_or_else(|| no_such_role(member))?;
    match role.member_of.iter_mut().find(|m| m.role == granted) {
        Some(existing) if existing.admin || !admin => Ok(vec![Notice {
            code: SqlState::SUCCESSFUL_COMPLETION,
            message: format!("role \"{member}\" is already a member of role \"{granted}\""),
        }]),
        Some(existing) => {
            existing.admin = true;
            Ok(Vec::new())
        }
        None => {
            role.member_of.push(Membership {
                role: granted.to_string(),
                admin,
            });
            Ok(Vec::new())
        }
    }
}

/// `GRANT role, ... TO member, ... [WITH ADMIN OPTION]`.
pub(crate) async fn grant_roles(
    roles: &dyn Roles,
    me: &SessionRoles,
    grant: &GrantRole,
) -> Result<QueryOutput, SqlError> {
    if grant.granted_by.is_some() {
        return Err(SqlError::unsupported("GRANT ... GRANTED BY"));
    }
    let mut admin = false;
    for option in &grant.options {
        match option.name.value.to_ascii_lowercase().as_str() {
            "admin" => admin = true,
            other => {
                return Err(SqlError::new(
                    SqlState::SYNTAX_ERROR,
                    format!("syntax error at or near \"{other}\""),
                ))
            }
        }
    }
    let granted: Vec<String> = grant.roles.iter().map(|id| role_spec(id, me)).collect();
    let members = grant
        .grantees
        .iter()
        .map(|g| grantee_name(g, me))
        .collect::<Result<Vec<_>, _>>()?;
    let enforced = roles.enforced();
    let notices = roles
        .update(&|catalog: &mut RoleCatalog| {
            let mut notices = Vec::new();
            for role in &granted {
                for member in &members {
                    notices.extend(add_member(catalog, me, enforced, role, member, admin)?);
                }
            }
            Ok(notices)
        })
        .await?;
    Ok(QueryOutput::Command {
        tag: "GRANT ROLE".into(),
        notices,
    })
}

/// `REVOKE [ADMIN OPTION FOR] role, ... FROM member, ...`.
pub(crate) async fn revoke_roles(
    roles: &dyn Roles,
    me: &SessionRoles,
    revoke: &RevokeRole,
) -> Result<QueryOutput, SqlError> {
    if revoke.granted_by.is_some() {
        return Err(SqlError::unsupported("REVOKE ... GRANTED BY"));
    }
    let admin_only = match &revoke.option_for {
        None => false,
        Some(option) if option.value.eq_ignore_ascii_case("admin") => true,
        Some(other) => {
            return Err(SqlError::new(
                SqlState::SYNTAX_ERROR,
                format!("syntax error at or near \"{other}\""),
            ))
        }
    };
    let revoked: Vec<String> = revoke.roles.iter().map(|id| role_spec(id, me)).collect();
    let members = revoke
        .grantees
        .iter()
        .map(|g| grantee_name(g, me))
        .collect::<Result<Vec<_>, _>>()?;
    let enforced = roles.enforced();
    let notices = roles
        .update(&|catalog: &mut RoleCatalog| {
            let mut notices = Vec::new();
            for role in &revoked {
                let who = me.who(catalog, enforced);
                let def = catalog.role(role).ok_or_else(|| no_such_role(role))?;
                if def.superuser {
                    if !who.is_superuser() {
                        return Err(denied("must be superuser to alter superusers"));
                    }
                } else if !who.may_create_roles() && !who.is_admin_of(role) {
                    return Err(denied(format!("must have admin option on role \"{role}\"")));
                }
                for member in &members {
                    let def = catalog
                        .role_mut(member)
                        .ok_or_else(|| no_such_role(member))?;
                    let Some(at) = def.member_of.iter().position(|m| m.role == *role) else {
                        notices.push(Notice {
                            code: SqlState::WARNING,
                            message: format!(
                                "role \"{member}\" is not a member of role \"{role}\""
                            ),
                        });
                        continue;
                    };
                    if admin_only {
                        def.member_of[at].admin = false;
                    } else {
                        def.member_of.remove(at);
                    }
                }
            }
            Ok(notices)
        })
        .await?;
    Ok(QueryOutput::Command {
        tag: "REVOKE ROLE".into(),
        notices,
    })
}
