//! The accept loop: one task per client connection, a cap on concurrent
//! sessions, and the start-up sequence before query processing.

use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rocklake_types::{Interrupt, SqlState, StopReason};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, OwnedSemaphorePermit, Semaphore};

use crate::backend::{self, Severity};
use crate::connection::Connection;
use crate::session::{SessionFactory, SessionStart, SqlSession};
use crate::session_thread::{self, ThreadPark};
use crate::socket::ClientSocket;
use crate::startup::{self, AuthMethod, ClientParams, Encryption, Handshake};
use crate::tls::{ClientStream, TlsConfig};
use crate::transport::ConnectionError;
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
    /// Stack of the thread each session runs on (see [`serve_until`]).
    pub session_stack_bytes: usize,
    /// Largest message a client may send (a query string, a COPY chunk).
    pub max_message_bytes: usize,
    /// On shutdown, how long running statements may go on before they are
    /// canceled.
    pub shutdown_grace: Duration,
    /// Which users may connect to which databases; `None` lets everyone.
    pub access: Option<Arc<crate::access::AccessRules>>,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            max_sessions: 100,
            auth: AuthMethod::Trust,
            startup_timeout: Duration::from_secs(60),
            tls: None,
            session_stack_bytes: 64 * 1024 * 1024,
            max_message_bytes: crate::transport::DEFAULT_MAX_MESSAGE_BYTES,
            shutdown_grace: Duration::from_secs(10),
            access: None,
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

/// Like [`serve`], until `shutdown` completes; then stops accepting
/// connections, ends the sessions waiting for their clients (FATAL 57P01),
/// lets running statements go on for `shutdown_grace`, cancels those still
/// running, and returns once every session has ended (at most a few seconds
/// after the grace period).
///
/// Each authenticated session runs on its own thread (PostgreSQL runs a
/// process per connection): a statement computing for a long time occupies
/// its thread, never the runtime's workers that serve the other sessions
/// and the store, and the operating system shares the processors between
/// sessions. The thread's stack is `session_stack_bytes`.
pub async fn serve_until(
    listener: TcpListener,
    sessions: Arc<dyn SessionFactory>,
    config: ServerConfig,
    shutdown: impl Future<Output = ()>,
) -> io::Result<()> {
    let (stopping, _) = watch::channel(false);
    let shared = Arc::new(Shared {
        limiter: Arc::new(Semaphore::new(config.max_sessions)),
        sessions,
        config,
        next_pid: AtomicI32::new(1000),
        running: Mutex::new(HashMap::new()),
        stopping,
    });
    tokio::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            _ = &mut shutdown => break,
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
    drop(listener);
    shared.shut_down().await;
    Ok(())
}

/// A running session, as cancel requests and shutdown find it.
struct Running {
    key: i32,
    interrupt: Arc<Interrupt>,
}

/// State shared by all connections of one server.
struct Shared {
    limiter: Arc<Semaphore>,
    sessions: Arc<dyn SessionFactory>,
    config: ServerConfig,
    next_pid: AtomicI32,
    /// Sessions by process id.
    running: Mutex<HashMap<i32, Running>>,
    /// True once the server shuts down.
    stopping: watch::Sender<bool>,
}

impl Shared {
    fn running(&self) -> std::sync::MutexGuard<'_, HashMap<i32, Running>> {
        self.running.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A new process id and a random secret key for BackendKeyData.
    fn backend_key(&self) -> (i32, i32) {
        let pid = self.next_pid.fetch_add(1, Ordering::Relaxed);
        (pid, rand::random::<i32>())
    }

    /// A CancelRequest: stops the running statement of the session with
    /// this process id, when the secret key matches (otherwise nothing
    /// happens, as in PostgreSQL).
    fn cancel(&self, pid: i32, key: i32) {
        match self.running().get(&pid) {
            Some(running) if running.key == key => {
                tracing::info!(pid, "cancel request");
                running.interrupt.stop(StopReason::Canceled);
            }
            _ => tracing::info!(pid, "cancel request for no session of that key ignored"),
        }
    }

    /// Whether no session is open.
    fn idle(&self) -> bool {
        self.limiter.available_permits() == self.config.max_sessions
    }

    /// Waits until no session is open, up to `limit`; whether none is.
    async fn sessions_ended(&self, limit: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + limit;
        while !self.idle() {
            if tokio::time::Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        true
    }

    /// See [`serve_until`].
    async fn shut_down(&self) {
        self.stopping.send_replace(true);
        let grace = self.config.shutdown_grace;
        if self.sessions_ended(grace).await {
            return;
        }
        let left = self.running().len();
        tracing::warn!(
            sessions = left,
            ?grace,
            "canceling the statements still running"
        );
        for running in self.running().values() {
            running.interrupt.stop(StopReason::Shutdown);
        }
        if !self.sessions_ended(Duration::from_secs(5)).await {
            tracing::warn!("sessions still open after their statements were canceled");
        }
    }
}

/// A connection that completed startup and authentication.
struct Started {
    transport: Transport<ClientStream>,
    session: Box<dyn SqlSession>,
    client: ClientParams,
    interrupt: Arc<Interrupt>,
    pid: i32,
    _permit: OwnedSemaphorePermit,
}

async fn handle(stream: TcpStream, peer: SocketAddr, shared: Arc<Shared>) -> Result<(), String> {
    let _ = stream.set_nodelay(true);
    let probe = client_probe(&stream);
    let timeout = shared.config.startup_timeout;
    // On timeout the future, and with it the socket, is dropped: the client
    // sees the connection close, as with PostgreSQL's authentication_timeout.
    let started = tokio::time::timeout(timeout, start(stream, peer, &shared))
        .await
        .map_err(|_| format!("startup not completed within {timeout:?}"))??;
    let Some(started) = started else {
        return Ok(());
    };
    if let Some(probe) = probe {
        started.interrupt.set_client_probe(probe);
    }
    let tls = started.transport.get_ref().is_tls();
    tracing::debug!(
        %peer, user = %started.client.user, database = %started.client.database, tls, "session started"
    );
    run_session(started, shared).await
}

/// Runs a started session on its own thread (see [`serve_until`]) and
/// waits for it to end.
async fn run_session(mut started: Started, shared: Arc<Shared>) -> Result<(), String> {
    let runtime = tokio::runtime::Handle::current();
    let (done, ended) = tokio::sync::oneshot::channel();
    let pid = started.pid;
    let park =
        ThreadPark::new().map_err(|e| format!("cannot make a session's wake-up pipe: {e}"))?;
    started
        .transport
        .get_mut()
        .move_to_thread(Arc::clone(&park))
        .map_err(|e| format!("cannot hand the socket to its session thread: {e}"))?;
    let stack = shared.config.session_stack_bytes;
    let thread = std::thread::Builder::new()
        .name(format!("session-{pid}"))
        .stack_size(stack)
        .spawn(move || {
            let Started {
                mut transport,
                session,
                client,
                interrupt,
                _permit,
                ..
            } = started;
            let _active = rocklake_metrics::metrics().session_started();
            // Gone from the cancel registry when the session ends, however.
            let _registered = Registered {
                shared: Arc::clone(&shared),
                pid,
            };
            transport.set_max_message(shared.config.max_message_bytes);
            let connection = Connection::new(transport, session)
                .with_shutdown(shared.stopping.subscribe())
                .with_interrupt(interrupt);
            // Timers and spawned tasks inside the session use the runtime;
            // the session's own waits sleep on `park` (see session_thread).
            let _runtime = runtime.enter();
            let result = session_thread::block_on(&park, connection.run());
            let _ = done.send(result.map_err(|e| {
                if let ConnectionError::Panic(message) = &e {
                    tracing::error!(pid, %message, "a session panicked; it was closed, the server goes on");
                }
                format!("{e} (user {}, database {})", client.user, client.database)
            }));
            release_freed_memory();
        })
        .map_err(|e| format!("cannot start a session thread: {e}"))?;
    drop(thread);
    ended
        .await
        .unwrap_or_else(|_| Err("the session thread ended without a result".to_string()))
}

/// Gives the memory an ended session freed back to the operating system.
/// glibc keeps freed memory in the allocation arena of the thread that used
/// it, and each session runs on its own thread: without this, a server that
/// served many short sessions (each DuckDB instance opens its own) keeps
/// their peak memory (docs/benchmarks.md, cause 5).
fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free pages of the allocator's arenas;
    // it takes no pointers and is safe to call from any thread.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// A session's entry in the cancel registry, removed when it is dropped.
struct Registered {
    shared: Arc<Shared>,
    pid: i32,
}

impl Drop for Registered {
    fn drop(&mut self) {
        self.shared.running().remove(&self.pid);
    }
}

/// A test of whether the client behind `stream` is still connected: its
/// socket has not been hung up or reset (checked without reading).
#[cfg(unix)]
fn client_probe(stream: &TcpStream) -> Option<rocklake_types::interrupt::ClientProbe> {
    use std::os::fd::AsRawFd;
    let fd = stream.as_raw_fd();
    Some(Box::new(move || {
        let mut poll = libc::pollfd {
            fd,
            events: libc::POLLRDHUP,
            revents: 0,
        };
        // SAFETY: one valid pollfd, no timeout; the descriptor belongs to
        // the connection, which outlives the statements that call this.
        let ready = unsafe { libc::poll(&mut poll, 1, 0) };
        !(ready > 0 && poll.revents & (libc::POLLRDHUP | libc::POLLHUP | libc::POLLERR) != 0)
    }))
}

#[cfg(not(unix))]
fn client_probe(_stream: &TcpStream) -> Option<rocklake_types::interrupt::ClientProbe> {
    None
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
    let mut transport = Transport::new(ClientStream::Plain(ClientSocket::new(stream)));
    let mut encryption = match tls {
        Some(_) => Encryption::Available,
        None => Encryption::Unavailable,
    };
    let mut client = loop {
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
            Ok(Handshake::Cancel { pid, key }) => {
                shared.cancel(pid, key);
                transport.shutdown().await;
                return Ok(None);
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
    client.hot_standby = shared.sessions.hot_standby();
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
    if let Some(access) = &shared.config.access {
        if !access.allows(&client.database, &client.user) {
            let encryption = if encryption == Encryption::Active {
                "SSL encryption"
            } else {
                "no encryption"
            };
            startup::send_fatal(
                &mut transport,
                SqlState::INVALID_AUTHORIZATION_SPECIFICATION,
                format!(
                    "no pg_hba.conf entry for host \"{}\", user \"{}\", database \"{}\", {encryption}",
                    peer.ip(),
                    client.user,
                    client.database
                ),
            );
            transport.shutdown().await;
            return Err(format!(
                "refused {} ({}): no access rule matches",
                client.user, client.database
            ));
        }
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
        let interrupt = Arc::new(Interrupt::default());
        let (pid, key) = shared.backend_key();
        let session = match shared
            .sessions
            .new_session(SessionStart {
                client: &client,
                pid,
                interrupt: interrupt.clone(),
                peer: Some(peer),
            })
            .await
        {
            Ok(session) => session,
            Err(error) => {
                backend::put_error(&mut transport.out, &error, Severity::Fatal);
                return Err(crate::transport::ConnectionError::Terminated(error));
            }
        };
        shared.running().insert(
            pid,
            Running {
                key,
                interrupt: interrupt.clone(),
            },
        );
        startup::send_session_start(&mut transport, &client, (pid, key)).await?;
        Ok::<_, crate::transport::ConnectionError>(Some((session, interrupt, pid)))
    }
    .await;
    match started {
        Ok(Some((session, interrupt, pid))) => Ok(Some(Started {
            transport,
            session,
            client,
            interrupt,
            pid,
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
