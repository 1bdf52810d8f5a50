//! `rocklake serve --metrics-listen ADDR`: an HTTP endpoint for monitoring.
//!
//! - `/`: the status page ([`crate::status_page`]);
//! - `/metrics`: every metric in Prometheus' (OpenMetrics) text format;
//! - `/healthz`: 200 while the process serves HTTP at all (liveness);
//! - `/readyz`: 200 when every database opened and each catalog is neither
//!   closed nor fenced and answers a read; 503 with the reasons otherwise.
//!   `/readyz?role=writer` (or `replica`, or `standby`) is also 503 on a
//!   server of another role, so a load balancer's health check can send
//!   clients to the writer or to the servers that serve reads (`replica`
//!   asks for any of them: replicas and standbys).

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, Weak};

use anyhow::Context;
use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use rocklake_store::ServedRoot;

/// Binds the endpoint's address (before the catalogs open, as the server's
/// own port is).
pub async fn bind(listen: SocketAddr) -> anyhow::Result<tokio::net::TcpListener> {
    tokio::net::TcpListener::bind(listen)
        .await
        .with_context(|| format!("binding the metrics endpoint {listen}"))
}

/// What the server is now and the databases it serves: set at start and
/// again when a standby takes over or a writer loses its lease.
#[derive(Default)]
pub struct ServingState {
    current: Mutex<Option<(ServerRole, Weak<ServedRoot>)>>,
    /// The server's sessions, for the status page.
    board: Mutex<Option<Arc<rocklake_types::activity::ActivityBoard>>>,
}

impl ServingState {
    /// The server is `role` now, serving `root`.
    pub fn set(&self, role: ServerRole, root: &Arc<ServedRoot>) {
        rocklake_metrics::metrics().set_role(role.name());
        *self.current.lock().unwrap_or_else(|e| e.into_inner()) =
            Some((role, Arc::downgrade(root)));
    }

    /// Shows the server's sessions on the status page.
    pub fn set_board(&self, board: Arc<rocklake_types::activity::ActivityBoard>) {
        *self.board.lock().unwrap_or_else(|e| e.into_inner()) = Some(board);
    }

    fn board(&self) -> Option<Arc<rocklake_types::activity::ActivityBoard>> {
        self.board.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The role and the root (`None` once it is closed).
    fn get(&self) -> (ServerRole, Option<Arc<ServedRoot>>) {
        match &*self.current.lock().unwrap_or_else(|e| e.into_inner()) {
            Some((role, root)) => (*role, root.upgrade()),
            None => (ServerRole::Standby, None),
        }
    }
}

/// Serves the endpoints on `listener` in the background; returns its
/// address.
pub fn start(
    listener: tokio::net::TcpListener,
    state: Arc<ServingState>,
) -> anyhow::Result<SocketAddr> {
    let bound = listener.local_addr()?;
    tokio::spawn(async move {
        loop {
            let stream = match listener.accept().await {
                Ok((stream, _)) => stream,
                Err(error) => {
                    tracing::warn!(%error, "metrics endpoint: accept failed");
                    continue;
                }
            };
            let state = state.clone();
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |request| {
                    let (role, root) = state.get();
                    let board = state.board();
                    async move { Ok::<_, Infallible>(respond(request, root, role, board).await) }
                });
                let connection = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service);
                if let Err(error) = connection.await {
                    tracing::debug!(%error, "metrics endpoint: connection ended");
                }
            });
        }
    });
    Ok(bound)
}

/// What a server is, as `/readyz?role=` asks it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerRole {
    /// It takes writes.
    Writer,
    /// A standby (`serve --standby`) serving reads until it takes over.
    Standby,
    /// A read replica (`serve --read-only`).
    Replica,
}

impl ServerRole {
    /// `writer`, `standby` or `replica`, as `/readyz?role=` and the
    /// `rocklake_role` metric name it.
    pub fn name(self) -> &'static str {
        match self {
            ServerRole::Writer => "writer",
            ServerRole::Standby => "standby",
            ServerRole::Replica => "replica",
        }
    }

    /// Whether a server of this role answers `/readyz?role=asked`.
    fn answers(self, asked: ServerRole) -> bool {
        self == asked || (asked == ServerRole::Replica && self == ServerRole::Standby)
    }
}

/// The role `/readyz` was asked about (`?role=writer|replica`), if any;
/// `Err` with the answer for a query it does not understand.
fn asked_role(query: Option<&str>) -> Result<Option<ServerRole>, String> {
    let Some(query) = query else {
        return Ok(None);
    };
    let mut asked = None;
    for pair in query.split('&').filter(|pair| !pair.is_empty()) {
        asked = match pair.split_once('=') {
            Some(("role", "writer")) => Some(ServerRole::Writer),
            Some(("role", "replica")) => Some(ServerRole::Replica),
            Some(("role", "standby")) => Some(ServerRole::Standby),
            _ => {
                return Err(format!(
                    "unknown query {pair:?}: /readyz?role=writer, ?role=replica or ?role=standby\n"
                ))
            }
        };
    }
    Ok(asked)
}

async fn respond(
    request: Request<Incoming>,
    root: Option<Arc<ServedRoot>>,
    role: ServerRole,
    board: Option<Arc<rocklake_types::activity::ActivityBoard>>,
) -> Response<Full<Bytes>> {
    if request.method() != Method::GET && request.method() != Method::HEAD {
        return text(StatusCode::METHOD_NOT_ALLOWED, "GET only\n".to_string());
    }
    match request.uri().path() {
        "/metrics" => {
            let mut response = text(StatusCode::OK, rocklake_metrics::metrics().render());
            response.headers_mut().insert(
                hyper::header::CONTENT_TYPE,
                hyper::header::HeaderValue::from_static(rocklake_metrics::CONTENT_TYPE),
            );
            response
        }
        "/healthz" => text(StatusCode::OK, "ok\n".to_string()),
        "/" => {
            let mut response = text(
                StatusCode::OK,
                crate::status_page::render(role, root, board).await,
            );
            response.headers_mut().insert(
                hyper::header::CONTENT_TYPE,
                hyper::header::HeaderValue::from_static("text/html; charset=utf-8"),
            );
            response
        }
        "/readyz" => match asked_role(request.uri().query()) {
            Err(message) => text(StatusCode::BAD_REQUEST, message),
            Ok(Some(asked)) if !role.answers(asked) => text(
                StatusCode::SERVICE_UNAVAILABLE,
                format!("not a {}: this server is a {}\n", asked.name(), role.name()),
            ),
            Ok(_) => readiness(root).await,
        },
        _ => text(
            StatusCode::NOT_FOUND,
            "not found: /, /metrics, /healthz and /readyz are served\n".to_string(),
        ),
    }
}

/// `/readyz` of the server's catalogs.
async fn readiness(root: Option<Arc<ServedRoot>>) -> Response<Full<Bytes>> {
    match root {
        None => text(
            StatusCode::SERVICE_UNAVAILABLE,
            "shutting down\n".to_string(),
        ),
        Some(root) => match root.check_ready().await {
            Ok(()) => text(StatusCode::OK, "ready\n".to_string()),
            Err(problems) => text(
                StatusCode::SERVICE_UNAVAILABLE,
                format!("not ready:\n{problems}\n"),
            ),
        },
    }
}

fn text(status: StatusCode, body: String) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}
