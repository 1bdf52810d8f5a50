//! `rocklake serve --metrics-listen ADDR`: an HTTP endpoint for monitoring.
//!
//! - `/metrics`: every metric in Prometheus' (OpenMetrics) text format;
//! - `/healthz`: 200 while the process serves HTTP at all (liveness);
//! - `/readyz`: 200 when every database opened and each catalog is neither
//!   closed nor fenced and answers a read; 503 with the reasons otherwise.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

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

/// Serves the endpoints on `listener` in the background; returns its
/// address.
pub fn start(
    listener: tokio::net::TcpListener,
    root: Arc<ServedRoot>,
) -> anyhow::Result<SocketAddr> {
    let bound = listener.local_addr()?;
    let root = Arc::downgrade(&root);
    tokio::spawn(async move {
        loop {
            let stream = match listener.accept().await {
                Ok((stream, _)) => stream,
                Err(error) => {
                    tracing::warn!(%error, "metrics endpoint: accept failed");
                    continue;
                }
            };
            let root = root.clone();
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |request| {
                    let root = root.upgrade();
                    async move { Ok::<_, Infallible>(respond(request, root).await) }
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

async fn respond(
    request: Request<Incoming>,
    root: Option<Arc<ServedRoot>>,
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
        "/readyz" => match root {
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
        },
        _ => text(
            StatusCode::NOT_FOUND,
            "not found: /metrics, /healthz and /readyz are served\n".to_string(),
        ),
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
