//! The server's role over time: a writer holds the root's writer lease
//! (see [`rocklake_store::lease`]) while it serves; a standby serves reads
//! as a replica until the writer is gone, then takes over as the writer of
//! every database of the root; a writer that loses the lease stops
//! committing, ends its sessions and exits (or, started with `--standby`,
//! serves as a standby again).
//!
//! A role change replaces what new sessions are served
//! ([`EngineSessions::switch`]) and ends the sessions of the role before
//! (FATAL 57P01): their clients reconnect, and libpq's
//! `target_session_attrs` finds the writer again.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context;
use rocklake::engine::EngineSessions;
use rocklake_store::lease::{self, Ended, HeldLease, LeaseGate, LeaseOptions};
use rocklake_store::{
    DeclaredRoles, LakeRoot, ReplicaOptions, Role, ServedRoles, ServedRoot, StoreOptions,
    VerifierMaker,
};

use crate::observe::{ServerRole, ServingState};

/// How the server opens the root for each role.
pub(super) struct Opener {
    pub lake_root: LakeRoot,
    pub writer: StoreOptions,
    pub replica: ReplicaOptions,
    pub default_database: Option<String>,
    pub enforced: bool,
    pub declared: DeclaredRoles,
    pub verifier: VerifierMaker,
    pub lease: LeaseOptions,
    /// How often a replica or standby looks for databases and roles its
    /// writer created.
    pub follow_every: Duration,
}

/// The root opened for one role, with its roles.
pub(super) struct Opened {
    pub role: ServerRole,
    pub root: Arc<ServedRoot>,
    pub roles: Arc<ServedRoles>,
}

impl Opener {
    /// Opens every database as the writer, committing under `lease`.
    pub async fn writer(&self, lease: Arc<LeaseGate>) -> anyhow::Result<Opened> {
        let options = StoreOptions {
            lease: Some(lease),
            ..self.writer.clone()
        };
        self.open(ServerRole::Writer, Role::Writer(options)).await
    }

    /// Opens every database as a replica (of a standby or a replica).
    pub async fn reader(&self, role: ServerRole) -> anyhow::Result<Opened> {
        self.open(role, Role::Replica(self.replica.clone())).await
    }

    async fn open(&self, role: ServerRole, store_role: Role) -> anyhow::Result<Opened> {
        let location = self.lake_root.location();
        let writer = role == ServerRole::Writer;
        let root = Arc::new(
            ServedRoot::open(
                self.lake_root.clone(),
                store_role,
                self.default_database.as_deref(),
            )
            .await
            .with_context(|| format!("opening the databases under {location}"))?,
        );
        let roles = Arc::new(
            ServedRoles::open(
                self.lake_root.clone(),
                writer,
                self.enforced,
                self.declared.clone(),
                Some(self.verifier.clone()),
            )
            .await
            .with_context(|| format!("reading the roles under {location}"))?,
        );
        if !writer {
            follow_writer(&root, &roles, self.follow_every);
        }
        Ok(Opened { role, root, roles })
    }
}

/// Follows the databases, schema lakes and roles the writer creates and
/// drops, for as long as `root` is served.
fn follow_writer(root: &Arc<ServedRoot>, roles: &Arc<ServedRoles>, every: Duration) {
    let follow = Arc::downgrade(root);
    let follow_roles = Arc::downgrade(roles);
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(every).await;
            let (Some(root), Some(roles)) = (follow.upgrade(), follow_roles.upgrade()) else {
                break;
            };
            if let Err(error) = root.refresh().await {
                tracing::warn!(%error, "following the root's databases failed");
            }
            if let Err(error) = roles.refresh().await {
                tracing::warn!(%error, "following the root's roles failed");
            }
        }
    });
}

/// The server's role and what it serves, changed as the lease says.
pub(super) struct RoleKeeper {
    pub opener: Opener,
    pub sessions: Arc<EngineSessions>,
    pub state: Arc<ServingState>,
    /// Started with `--standby`: a lost lease makes this server a standby
    /// again rather than ending it.
    pub standby: bool,
    pub current: Mutex<Arc<Opened>>,
    /// Why the server must exit, once it must.
    pub exit: tokio::sync::watch::Sender<Option<String>>,
    pub storage_timeout: Duration,
    /// Where password lookups find the roles served now.
    pub roles_cell: super::RolesCell,
}

impl RoleKeeper {
    /// What the server serves now.
    pub fn current(&self) -> Arc<Opened> {
        self.current
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Serves `next` from now on; ends the sessions of what was served
    /// before and closes it.
    async fn serve(&self, next: Opened) {
        let next = Arc::new(next);
        self.sessions.switch(
            next.root.clone(),
            next.role != ServerRole::Writer,
            next.roles.clone(),
        );
        self.state.set(next.role, &next.root);
        *self.roles_cell.lock().unwrap_or_else(|e| e.into_inner()) = Some(next.roles.clone());
        let before = std::mem::replace(
            &mut *self.current.lock().unwrap_or_else(|e| e.into_inner()),
            next,
        );
        let ended = before.root.end_sessions();
        tracing::info!(ended, "ended the sessions of the role before");
        for problem in before.root.close_within(self.storage_timeout).await {
            tracing::warn!(problem, "closing the catalogs of the role before");
        }
    }

    /// Keeps the role until `shutdown` is set: renews the lease while
    /// writing, takes over when a standby's writer is gone. Returns the
    /// lease when the server still holds it at shutdown.
    pub async fn run(
        self: Arc<Self>,
        mut lease: Option<HeldLease>,
        mut shutdown: tokio::sync::watch::Receiver<bool>,
    ) -> Option<HeldLease> {
        loop {
            let (held, promote) = match lease.take() {
                Some(held) => (held, false),
                None => tokio::select! {
                    held = self.claim() => (held, true),
                    _ = stopping(&mut shutdown) => return None,
                },
            };
            let (term, previous, gate) = (held.term(), held.previous().describe(), held.gate());
            let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
            // The lease is renewed from the claim on, while the databases
            // open as the writer too.
            let mut keeping = tokio::spawn(held.keep(async {
                let _ = stopped.await;
            }));
            if promote {
                let started = Instant::now();
                match self.opener.writer(gate).await {
                    Ok(opened) => {
                        self.serve(opened).await;
                        let took = started.elapsed();
                        rocklake_metrics::metrics().takeover(took);
                        eprintln!(
                            "rocklake: took over as the writer (lease term {term}; before: {previous}) in {} ms",
                            took.as_millis()
                        );
                    }
                    Err(error) => {
                        // Give the lease up without releasing it: another
                        // standby takes over once its heartbeat stops.
                        tracing::error!(error = format!("{error:#}"), "taking over failed");
                        let _ = stop.send(());
                        let _ = keeping.await;
                        tokio::time::sleep(self.opener.lease.takeover_after * 2).await;
                        continue;
                    }
                }
            }
            let ended = tokio::select! {
                ended = &mut keeping => ended,
                _ = stopping(&mut shutdown) => {
                    let _ = stop.send(());
                    return match keeping.await {
                        Ok(Ended::Stopped(held)) => Some(*held),
                        _ => None,
                    };
                }
            };
            let reason = match ended {
                Ok(Ended::Lost(reason)) => reason,
                Ok(Ended::Stopped(_)) => continue,
                Err(error) => format!("renewing the lease failed: {error}"),
            };
            self.current().root.end_sessions();
            if !self.standby {
                let _ = self
                    .exit
                    .send(Some(format!("lost the writer lease: {reason}")));
                return None;
            }
            eprintln!("rocklake: lost the writer lease ({reason}); serving as a standby");
            self.become_standby().await;
        }
    }

    /// Waits until the writer is gone and claims the lease.
    async fn claim(&self) -> HeldLease {
        loop {
            match lease::wait_and_claim(&self.opener.lake_root, &self.opener.lease).await {
                Ok(held) => return held,
                Err(error) => {
                    tracing::warn!(%error, "watching the writer lease failed");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
            }
        }
    }

    /// Opens every database as a standby and serves them.
    async fn become_standby(&self) {
        loop {
            match self.opener.reader(ServerRole::Standby).await {
                Ok(opened) => return self.serve(opened).await,
                Err(error) => {
                    tracing::warn!(
                        error = format!("{error:#}"),
                        "opening the databases as a standby failed"
                    );
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
            }
        }
    }
}

/// Applies retention to every lake the server writes, then drops the
/// inlined tables no snapshot can read ([`crate::hygiene`]), every `every`,
/// for as long as the server runs (see [`rocklake_store::auto_retention`]).
pub(super) fn apply_retention_on_schedule(
    keeper: &Arc<RoleKeeper>,
    retain: Option<Duration>,
    every: Duration,
) {
    let keeper = Arc::downgrade(keeper);
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(every.max(Duration::from_millis(100))).await;
            let Some(keeper) = keeper.upgrade() else {
                break;
            };
            let current = keeper.current();
            if current.role != ServerRole::Writer {
                continue;
            }
            for (lake, store) in current.root.writer_catalogs() {
                match store
                    .apply_retention(retain, std::time::SystemTime::now())
                    .await
                {
                    Ok(Some(pass)) if pass.outcome.floor > pass.outcome.previous => {
                        let rows = pass.excised.as_ref().map_or(0, |report| report.rows());
                        tracing::info!(
                            lake,
                            floor = pass.outcome.floor,
                            previous = pass.outcome.previous,
                            rows,
                            "retention applied"
                        );
                    }
                    Ok(_) => {}
                    Err(error) => tracing::warn!(lake, %error, "applying retention failed"),
                }
            }
            crate::hygiene::run_pass(&current.root).await;
        }
    });
}

/// Resolves once `shutdown` is set.
async fn stopping(shutdown: &mut tokio::sync::watch::Receiver<bool>) {
    let _ = shutdown.wait_for(|stop| *stop).await;
}
