//! The accept loop: one task per client connection, a cap on concurrent
//! sessions, and the start-up sequence before query processing.

use std::collections::hash_map::RandomState;
use std::future::Future;
use std::hash::{BuildHasher, Hasher};
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rocklake_types::SqlState;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::connection::Connection;
use crate::session::{SessionFactory, SqlSession};
use crate::startup::{self, AuthMethod, ClientParams, Encryption, Handshake};
use crate::tls::{ClientStream, TlsConfig};
use crate::transport::Transport;

/// Server settings.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Most client sessions served at once; further clients get SQLSTATE 53300
    /// `sorry, too many clients already`.
    pub max_sessions: usize,
    /// How clients authenticate.
    pub auth: AuthMethod,
    /// A client that has not completed TLS, its StartupMessage and
    /// authentication within this time is disconnected (PostgreSQL's
    /// `authentication_timeout`).
    pub startup_timeout: Duration,
    /// TLS certificate and policy; `None` answers `N` to SSLRequest.
    pub tls: Option<TlsConfig>,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            max_sessions: 100,
            auth: AuthMethod::Trust,
            startup_timeout: Duration::from_secs(60),
            tls: None,
        }
    }
}

/// Serves PostgreSQL clients on `listener` until the process ends, one task
/// per connection, each with a session from `sessions`.
pub async fn serve(
    listener: TcpListener,
    sessions: Arc<dyn SessionFactory>,
    config: ServerConfig,
) -> io::Result<()> {
    serve_until(listener, sessions, config, std::future::pending()).await
}

/// Like [`serve`], but stops accepting new connections when `shutdown`
/// completes (connections already open run on until their clients leave).
pub async fn serve_until(
    listener: TcpListener,
    sessions: Arc<dyn SessionFactory>,
    config: ServerConfig,
    shutdown: impl Future<Output = ()>,
) -> io::Result<()> {
    let shared = Arc::new(Shared {
        limiter: Arc::new(Semaphore::new(config.max_sessions)),
        sessions,
        config,
        next_pid: AtomicI32::new(1000),
        keys: RandomState::new(),
    });
    tokio::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            _ = &mut shutdown => return Ok(()),
            accepted = listener.accept() => accepted,
        };
        match accepted {
            Ok((stream, peer)) => {
                let shared = Arc::clone(&shared);
                tokio::spawn(async move {
                    if let Err(e) = handle(stream, peer, shared).await {
                        tracing::debug!(%peer, error = %e, "connection ended with an error");
                    }
                });
            }
            Err(e) => {
                // Usually out of file descriptors: back off instead of spinning.
                tracing::warn!(error = %e, "accept failed");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}

/// State shared by all connections of one server.
struct Shared {
    limiter: Arc<Semaphore>,
    sessions: Arc<dyn SessionFactory>,
    config: ServerConfig,
    next_pid: AtomicI32,
    keys: RandomState,
}

impl Shared {
    /// A process id (the session's, if it has one) and a random secret key
    /// for BackendKeyData.
    fn backend_key(&self, session_pid: Option<i32>) -> (i32, i32) {
        let pid = session_pid.unwrap_or_else(|| self.next_pid.fetch_add(1, Ordering::Relaxed));
        let mut hasher = self.keys.build_hasher();
        hasher.write_i32(pid);
        (pid, hasher.finish() as i32)
    }
}

/// A connection that completed startup and authentication.
struct Started {
    transport: Transport<ClientStream>,
    session: Box<dyn SqlSession>,
    client: ClientParams,
    _permit: OwnedSemaphorePermit,
}

async fn handle(stream: TcpStream, peer: SocketAddr, shared: Arc<Shared>) -> Result<(), String> {
    let _ = stream.set_nodelay(true);
    let timeout = shared.config.startup_timeout;
    // On timeout the future, and with it the socket, is dropped: the client
    // sees the connection close, as with PostgreSQL's authentication_timeout.
    let started = tokio::time::timeout(timeout, start(stream, peer, &shared))
        .await
        .map_err(|_| format!("startup not completed within {timeout:?}"))??;
    let Some(Started {
        transport,
        session,
        client,
        _permit,
    }) = started
    else {
        return Ok(());
    };
    let tls = transport.get_ref().is_tls();
    tracing::debug!(
        %peer, user = %client.user, database = %client.database, tls, "session started"
    );
    Connection::new(transport, session)
        .run()
        .await
        .map_err(|e| format!("{e} (user {}, database {})", client.user, client.database))
}

/// Negotiates encryption, reads the StartupMessage, applies the TLS policy
/// and the session cap, and authenticates; `Ok(None)` when the connection
/// ended cleanly before a session started.
async fn start(
    stream: TcpStream,
    peer: SocketAddr,
    shared: &Shared,
) -> Result<Option<Started>, String> {
    let tls = shared.config.tls.as_ref();
    let mut transport = Transport::new(ClientStream::Plain(stream));
    let mut encryption = match tls {
        Some(_) => Encryption::Available,
        None => Encryption::Unavailable,
    };
    let client = loop {
        match startup::negotiate(&mut transport, encryption).await {
            Ok(Handshake::Startup(client)) => break client,
            Ok(Handshake::StartTls) => {
                let (Some(tls), ClientStream::Plain(tcp)) = (tls, transport.into_inner()) else {
                    return Err("TLS requested on a stream that cannot start it".to_string());
                };
                let stream = tls
                    .accept(tcp)
                    .await
                    .map_err(|e| format!("TLS handshake failed: {e}"))?;
                transport = Transport::new(stream);
                encryption = Encryption::Active;
            }
            Ok(Handshake::Done) => {
                transport.shutdown().await;
                return Ok(None);
            }
            Err(e) => {
                transport.shutdown().await;
                return Err(format!("startup failed: {e}"));
            }
        }
    };
    if tls.is_some_and(|t| t.require) && encryption != Encryption::Active {
        startup::send_fatal(
            &mut transport,
            SqlState::INVALID_AUTHORIZATION_SPECIFICATION,
            format!(
                "no pg_hba.conf entry for host \"{}\", user \"{}\", database \"{}\", no encryption",
                peer.ip(),
                client.user,
                client.database
            ),
        );
        transport.shutdown().await;
        return Err(format!("refused {}: TLS is required", client.user));
    }
    let Ok(permit) = Arc::clone(&shared.limiter).try_acquire_owned() else {
        startup::send_fatal(
            &mut transport,
            SqlState::TOO_MANY_CONNECTIONS,
            "sorry, too many clients already",
        );
        transport.shutdown().await;
        return Err(format!(
            "refused {} ({}): too many clients",
            client.user, client.database
        ));
    };
    let started = async {
        if !startup::authenticate(&mut transport, &shared.config.auth, &client).await? {
            return Ok(None);
        }
        let session = shared.sessions.new_session(&client);
        let key = shared.backend_key(session.backend_pid());
        startup::send_session_start(&mut transport, &client, key).await?;
        Ok::<_, crate::transport::ConnectionError>(Some(session))
    }
    .await;
    match started {
        Ok(Some(session)) => Ok(Some(Started {
            transport,
            session,
            client,
            _permit: permit,
        })),
        Ok(None) => {
            transport.shutdown().await;
            Err(format!("authentication failed for user {}", client.user))
        }
        Err(e) => {
            transport.shutdown().await;
            Err(format!("startup failed: {e}"))
        }
    }
}
