//! `rocklake serve`'s password, role and TLS options, and the rule that
//! binds them to the listen address: loopback may go without, any other
//! address needs both password authentication and TLS, and then refuses
//! plaintext. With passwords, the users they name are roles of the server
//! (see `rocklake_store::roles`): ordinary ones, except the bootstrap
//! superuser `postgres`, the one `--user`, and those named by `--superuser`.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{bail, Context};
use rocklake_store::DeclaredRoles;
use rocklake_wire::{AuthMethod, ScramUsers, ScramVerifier, TlsConfig};

/// Password and TLS options of `rocklake serve`.
#[derive(clap::Args, Debug, Default)]
pub struct SecurityArgs {
    /// Enables SCRAM-SHA-256 password authentication for the users in FILE:
    /// one `user:password` per line, or `user:SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>`
    /// (a PostgreSQL verifier, e.g. from pg_authid) to keep no plaintext on disk.
    /// Blank lines and lines starting with `#` are ignored; the password is
    /// everything after the first `:`.
    #[arg(long, value_name = "FILE")]
    password_file: Option<PathBuf>,
    /// Enables password authentication for this user, with the password from
    /// --password or the ROCKLAKE_PASSWORD environment variable.
    #[arg(long)]
    user: Option<String>,
    /// Password of --user. Prefer the ROCKLAKE_PASSWORD environment variable:
    /// command lines are visible to other local users.
    #[arg(long, env = "ROCKLAKE_PASSWORD", hide_env_values = true)]
    password: Option<String>,
    /// Server certificate chain (PEM, leaf first); enables TLS with --tls-key.
    #[arg(long, value_name = "FILE")]
    tls_cert: Option<PathBuf>,
    /// Private key of --tls-cert (PEM: PKCS#8, PKCS#1 or SEC1).
    #[arg(long, value_name = "FILE")]
    tls_key: Option<PathBuf>,
    /// Refuse clients that do not use TLS even on a loopback address (always
    /// the case on other addresses).
    #[arg(long)]
    require_tls: bool,
    /// Makes this role a superuser (created if missing) when the server
    /// starts; repeatable. Other users of the password file are ordinary
    /// roles (NOSUPERUSER NOCREATEDB), as in PostgreSQL; `postgres` is
    /// always a superuser.
    #[arg(long, value_name = "ROLE")]
    superuser: Vec<String>,
}

/// What the server is configured with.
#[derive(Debug)]
pub struct Security {
    /// How clients authenticate.
    pub auth: AuthMethod,
    /// TLS settings, if any.
    pub tls: Option<TlsConfig>,
    /// The roles the configuration declares.
    pub declared: DeclaredRoles,
}

impl SecurityArgs {
    /// Loads users and certificates and checks them against `listen`;
    /// users the password file does not hold are looked up with `roles`
    /// (the roles' own passwords).
    pub fn configure(
        &self,
        listen: SocketAddr,
        roles: Option<rocklake_wire::VerifierLookup>,
    ) -> anyhow::Result<Security> {
        for name in &self.superuser {
            rocklake_types::ident::check_name(name, "--superuser")
                .map_err(|e| anyhow::anyhow!(e.message))?;
        }
        let mut users = self.users()?;
        let declared = DeclaredRoles {
            login_users: users
                .as_ref()
                .map(|users| users.names())
                .unwrap_or_default(),
            superusers: self.superuser.iter().chain(&self.user).cloned().collect(),
        };
        if let (Some(users), Some(roles)) = (users.as_mut(), roles) {
            users.set_fallback(roles);
        }
        let tls = match (&self.tls_cert, &self.tls_key) {
            (Some(cert), Some(key)) => {
                let require = self.require_tls || !listen.ip().is_loopback();
                Some(TlsConfig::from_pem_files(cert, key, require)?)
            }
            (None, None) => None,
            _ => bail!("--tls-cert and --tls-key go together"),
        };
        if self.require_tls && tls.is_none() {
            bail!("--require-tls needs --tls-cert and --tls-key");
        }
        if !listen.ip().is_loopback() && (users.is_none() || tls.is_none()) {
            bail!(
                "refusing to listen on {listen}: a non-loopback address needs password authentication \
                 (--password-file, or --user with ROCKLAKE_PASSWORD) and TLS (--tls-cert and --tls-key); \
                 without them, listen on a loopback address such as 127.0.0.1"
            );
        }
        let auth = match users {
            Some(users) => AuthMethod::ScramSha256(Arc::new(users)),
            None => AuthMethod::Trust,
        };
        Ok(Security {
            auth,
            tls,
            declared,
        })
    }

    /// The users from --password-file and --user / --password, if any.
    fn users(&self) -> anyhow::Result<Option<ScramUsers>> {
        let mut users = ScramUsers::new();
        if let Some(path) = &self.password_file {
            warn_if_readable_by_others(path);
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading password file {}", path.display()))?;
            parse_password_file(&text, &mut users)
                .with_context(|| format!("password file {}", path.display()))?;
            if users.is_empty() {
                bail!("password file {} has no users", path.display());
            }
        }
        match (&self.user, &self.password) {
            (Some(user), Some(password)) => add_user(&mut users, user, password)?,
            (Some(_), None) => bail!("--user needs a password: set ROCKLAKE_PASSWORD"),
            (None, Some(_)) => {
                bail!("a password was given (--password or ROCKLAKE_PASSWORD) without --user")
            }
            (None, None) => {}
        }
        Ok((!users.is_empty()).then_some(users))
    }
}

fn add_user(users: &mut ScramUsers, user: &str, password: &str) -> anyhow::Result<()> {
    if user.is_empty() {
        bail!("empty user name");
    }
    if password.is_empty() {
        bail!("empty password for user {user:?}");
    }
    let before = users.len();
    let verifier = ScramVerifier::parse(password).unwrap_or_else(|| ScramVerifier::new(password));
    users.insert(user, verifier);
    if users.len() == before {
        bail!("user {user:?} is given twice");
    }
    Ok(())
}

/// Adds the `user:password` lines of `text` to `users`.
fn parse_password_file(text: &str, users: &mut ScramUsers) -> anyhow::Result<()> {
    for (number, line) in text.lines().enumerate() {
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        let Some((user, password)) = line.split_once(':') else {
            bail!("line {}: expected user:password", number + 1);
        };
        add_user(users, user.trim(), password).with_context(|| format!("line {}", number + 1))?;
    }
    Ok(())
}

#[cfg(unix)]
fn warn_if_readable_by_others(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    if let Ok(meta) = std::fs::metadata(path) {
        if meta.permissions().mode() & 0o077 != 0 {
            eprintln!(
                "rocklake: warning: password file {} is accessible by other users (chmod 600 it)",
                path.display()
            );
        }
    }
}

#[cfg(not(unix))]
fn warn_if_readable_by_others(_path: &Path) {}

#[cfg(test)]
mod tests {
    use super::*;

    fn loopback() -> SocketAddr {
        "127.0.0.1:5432".parse().unwrap()
    }

    fn public() -> SocketAddr {
        "0.0.0.0:5432".parse().unwrap()
    }

    #[test]
    fn password_file_format() {
        let verifier = ScramVerifier::new("pw3").to_string();
        let text = format!("# users\n\nalice:pw:with:colons\n  bob:pw2\ncarol:{verifier}\n");
        let mut users = ScramUsers::new();
        parse_password_file(&text, &mut users).unwrap();
        assert_eq!(users.len(), 3);
        for bad in ["nocolon", ":pw", "dave:", "eve:a\neve:b"] {
            let error = parse_password_file(bad, &mut ScramUsers::new()).unwrap_err();
            assert!(format!("{error:#}").contains("line"), "{bad}: {error:#}");
        }
    }

    #[test]
    fn loopback_needs_nothing() {
        let security = SecurityArgs::default().configure(loopback(), None).unwrap();
        assert_eq!(security.auth, AuthMethod::Trust);
        assert!(security.tls.is_none());
    }

    #[test]
    fn other_addresses_need_password_and_tls() {
        let error = SecurityArgs::default()
            .configure(public(), None)
            .unwrap_err();
        assert!(error
            .to_string()
            .contains("refusing to listen on 0.0.0.0:5432"));
        let password_only = SecurityArgs {
            user: Some("u".into()),
            password: Some("p".into()),
            ..SecurityArgs::default()
        };
        assert!(password_only.configure(public(), None).is_err());
        let configured = password_only.configure(loopback(), None).unwrap();
        assert!(matches!(configured.auth, AuthMethod::ScramSha256(_)));
        assert_eq!(configured.declared.login_users, ["u"]);
        assert_eq!(
            configured.declared.superusers,
            ["u"],
            "--user is the server's one user"
        );
    }

    #[test]
    fn incomplete_options_are_refused() {
        let cases = [
            SecurityArgs {
                user: Some("u".into()),
                ..SecurityArgs::default()
            },
            SecurityArgs {
                password: Some("p".into()),
                ..SecurityArgs::default()
            },
            SecurityArgs {
                tls_cert: Some("cert.pem".into()),
                ..SecurityArgs::default()
            },
            SecurityArgs {
                require_tls: true,
                ..SecurityArgs::default()
            },
        ];
        for args in cases {
            assert!(args.configure(loopback(), None).is_err(), "{args:?}");
        }
    }
}
