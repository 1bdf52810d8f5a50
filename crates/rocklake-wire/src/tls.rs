//! TLS for client connections: the server's certificate and key, and the
//! stream a connection runs over, plain TCP or TLS after an SSLRequest.
//!
//! rustls with the `ring` provider, chosen explicitly (not through rustls'
//! process-wide default) so it does not matter which other providers the
//! binary links.

use std::io;
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio_rustls::server::TlsStream;
use tokio_rustls::TlsAcceptor;

use crate::session_thread::ThreadPark;
use crate::socket::ClientSocket;

/// TLS settings of a server.
#[derive(Clone)]
pub struct TlsConfig {
    acceptor: TlsAcceptor,
    /// Refuse clients that do not start TLS (FATAL 28000, like a
    /// `hostssl`-only `pg_hba.conf`).
    pub require: bool,
}

impl std::fmt::Debug for TlsConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsConfig")
            .field("require", &self.require)
            .finish_non_exhaustive()
    }
}

impl TlsConfig {
    /// Builds the configuration from a PEM certificate chain (leaf first) and
    /// a PEM private key (PKCS#8, PKCS#1 or SEC1).
    pub fn from_pem(cert_pem: &[u8], key_pem: &[u8], require: bool) -> io::Result<Self> {
        let invalid = |what: &str, e: &dyn std::fmt::Display| {
            io::Error::new(io::ErrorKind::InvalidData, format!("{what}: {e}"))
        };
        let certs = CertificateDer::pem_slice_iter(cert_pem)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| invalid("reading the certificate PEM", &e))?;
        if certs.is_empty() {
            return Err(invalid(
                "reading the certificate PEM",
                &"no certificate found",
            ));
        }
        let key = PrivateKeyDer::from_pem_slice(key_pem)
            .map_err(|e| invalid("reading the private key PEM", &e))?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| invalid("TLS protocol versions", &e))?
            .with_no_client_auth()
            .with_single_cert(certs, key)
            .map_err(|e| invalid("certificate and key", &e))?;
        Ok(TlsConfig {
            acceptor: TlsAcceptor::from(Arc::new(config)),
            require,
        })
    }

    /// Like [`TlsConfig::from_pem`], reading the two PEM files.
    pub fn from_pem_files(cert: &Path, key: &Path, require: bool) -> io::Result<Self> {
        let read = |path: &Path| {
            std::fs::read(path)
                .map_err(|e| io::Error::new(e.kind(), format!("reading {}: {e}", path.display())))
        };
        Self::from_pem(&read(cert)?, &read(key)?, require)
    }

    /// Runs the TLS handshake on a client's stream.
    pub async fn accept(&self, stream: ClientSocket) -> io::Result<ClientStream> {
        let tls = self.acceptor.accept(stream).await?;
        Ok(ClientStream::Tls(Box::new(tls)))
    }
}

/// A client connection's byte stream.
pub enum ClientStream {
    /// Unencrypted TCP.
    Plain(ClientSocket),
    /// TLS over TCP.
    Tls(Box<TlsStream<ClientSocket>>),
}

impl ClientStream {
    /// True for a TLS stream.
    pub fn is_tls(&self) -> bool {
        matches!(self, ClientStream::Tls(_))
    }

    /// Hands the socket under the stream (and the TLS state above it, which
    /// stays as it is) to the session thread that sleeps on `park`.
    pub fn move_to_thread(&mut self, park: Arc<ThreadPark>) -> io::Result<()> {
        match self {
            ClientStream::Plain(socket) => socket.move_to_thread(park),
            ClientStream::Tls(tls) => tls.get_mut().0.move_to_thread(park),
        }
    }
}

impl AsyncRead for ClientStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            ClientStream::Plain(s) => Pin::new(s).poll_read(cx, buf),
            ClientStream::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for ClientStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            ClientStream::Plain(s) => Pin::new(s).poll_write(cx, buf),
            ClientStream::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            ClientStream::Plain(s) => Pin::new(s).poll_flush(cx),
            ClientStream::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            ClientStream::Plain(s) => Pin::new(s).poll_shutdown(cx),
            ClientStream::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}
