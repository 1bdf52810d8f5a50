//! The role catalog ([`RoleCatalog`]) to and from its protobuf bytes
//! (`RoleCatalog` in `proto/rocklake_catalog.proto`).

use prost::Message;
use rocklake_types::roles::{Membership, RoleCatalog, RoleDef, RoleSetting};

use crate::values::pb;

/// The bytes of `catalog`.
pub fn encode(catalog: &RoleCatalog) -> Vec<u8> {
    pb::RoleCatalog {
        roles: catalog.roles.iter().map(stored_role).collect(),
        next_oid: catalog.next_oid,
        owners: catalog
            .owners
            .iter()
            .map(|(database, owner)| (database.clone(), owner.clone()))
            .collect(),
    }
    .encode_to_vec()
}

/// The catalog `bytes` hold; the bootstrap superuser is added when missing.
pub fn decode(bytes: &[u8]) -> Result<RoleCatalog, prost::DecodeError> {
    let stored = pb::RoleCatalog::decode(bytes)?;
    let mut catalog = RoleCatalog {
        roles: Vec::new(),
        next_oid: stored.next_oid.max(rocklake_types::roles::FIRST_ROLE_OID),
        owners: stored.owners.into_iter().collect(),
    };
    for role in stored.roles {
        catalog.insert(role_def(role));
    }
    if catalog
        .role(rocklake_types::roles::BOOTSTRAP_ROLE)
        .is_none()
    {
        catalog.insert(RoleDef::bootstrap());
    }
    Ok(catalog)
}

fn stored_role(role: &RoleDef) -> pb::StoredRole {
    pb::StoredRole {
        name: role.name.clone(),
        oid: role.oid,
        superuser: role.superuser,
        createdb: role.createdb,
        createrole: role.createrole,
        login: role.login,
        inherit: role.inherit,
        replication: role.replication,
        bypassrls: role.bypassrls,
        connection_limit: role.connection_limit,
        verifier: role.verifier.clone(),
        member_of: role
            .member_of
            .iter()
            .map(|m| pb::StoredMembership {
                role: m.role.clone(),
                admin: m.admin,
            })
            .collect(),
        settings: role
            .settings
            .iter()
            .map(|s| pb::StoredRoleSetting {
                database: s.database.clone(),
                name: s.name.clone(),
                value: s.value.clone(),
            })
            .collect(),
    }
}

fn role_def(role: pb::StoredRole) -> RoleDef {
    RoleDef {
        name: role.name,
        oid: role.oid,
        superuser: role.superuser,
        createdb: role.createdb,
        createrole: role.createrole,
        login: role.login,
        inherit: role.inherit,
        replication: role.replication,
        bypassrls: role.bypassrls,
        connection_limit: role.connection_limit,
        verifier: role.verifier,
        member_of: role
            .member_of
            .into_iter()
            .map(|m| Membership {
                role: m.role,
                admin: m.admin,
            })
            .collect(),
        settings: role
            .settings
            .into_iter()
            .map(|s| RoleSetting {
                database: s.database,
                name: s.name,
                value: s.value,
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_role_catalog_survives_its_bytes() {
        let mut catalog = RoleCatalog::default();
        let mut reader = catalog.new_role("reader");
        reader.login = true;
        reader.verifier = Some("SCRAM-SHA-256$4096:c2FsdA==$a:b".into());
        reader.member_of.push(Membership {
            role: "postgres".into(),
            admin: true,
        });
        reader.settings.push(RoleSetting {
            database: Some("lake".into()),
            name: "default_transaction_read_only".into(),
            value: "on".into(),
        });
        catalog.insert(reader);
        catalog.owners.insert("sales".into(), "reader".into());
        let again = decode(&encode(&catalog)).unwrap();
        assert_eq!(again, catalog);
        assert_eq!(decode(&[]).unwrap().roles, RoleCatalog::default().roles);
    }
}
