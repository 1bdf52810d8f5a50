//! A client's TCP socket: served by the runtime's reactor while the
//! connection starts (TLS, startup, authentication run as runtime tasks),
//! then by the session's own thread ([`crate::session_thread`]), which waits
//! for it in `poll(2)` itself.

use std::io::{self, Read, Write};
use std::net::Shutdown;
use std::os::fd::AsRawFd;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use crate::session_thread::ThreadPark;

/// Who waits for the socket.
enum Owner {
    /// The runtime's reactor.
    Reactor(tokio::net::TcpStream),
    /// The session thread that sleeps on `park` (non-blocking socket).
    Thread {
        stream: std::net::TcpStream,
        park: Arc<ThreadPark>,
    },
    /// Only while [`ClientSocket::move_to_thread`] runs.
    Moving,
}

/// A client connection's TCP socket.
pub struct ClientSocket {
    owner: Owner,
}

impl ClientSocket {
    /// A socket served by the runtime's reactor.
    pub fn new(stream: tokio::net::TcpStream) -> Self {
        ClientSocket {
            owner: Owner::Reactor(stream),
        }
    }

    /// Takes the socket out of the reactor: from now on it is read and
    /// written only by the futures that [`crate::session_thread::block_on`]
    /// runs with `park`.
    pub fn move_to_thread(&mut self, park: Arc<ThreadPark>) -> io::Result<()> {
        match std::mem::replace(&mut self.owner, Owner::Moving) {
            Owner::Reactor(stream) => {
                // Deregisters it from the reactor; it stays non-blocking.
                let stream = stream.into_std()?;
                self.owner = Owner::Thread { stream, park };
                Ok(())
            }
            other => {
                self.owner = other;
                Err(io::Error::other("the socket is not served by the reactor"))
            }
        }
    }

    fn moving() -> io::Error {
        io::Error::other("the socket is being moved to its session thread")
    }
}

/// Runs a non-blocking socket operation; when it would block, asks the
/// session thread to wake `cx` once the socket is ready for it.
fn on_thread<T>(
    stream: &std::net::TcpStream,
    park: &ThreadPark,
    write: bool,
    cx: &Context<'_>,
    mut operation: impl FnMut(&std::net::TcpStream) -> io::Result<T>,
) -> Poll<io::Result<T>> {
    loop {
        match operation(stream) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                park.wait_for_socket(stream.as_raw_fd(), write, cx.waker());
                return Poll::Pending;
            }
            result => return Poll::Ready(result),
        }
    }
}

impl AsyncRead for ClientSocket {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match &mut self.get_mut().owner {
            Owner::Reactor(stream) => Pin::new(stream).poll_read(cx, buf),
            Owner::Thread { stream, park } => {
                let unfilled = buf.initialize_unfilled();
                let read = on_thread(stream, park, false, cx, |mut s| s.read(unfilled));
                read.map_ok(|n| buf.advance(n))
            }
            Owner::Moving => Poll::Ready(Err(Self::moving())),
        }
    }
}

impl AsyncWrite for ClientSocket {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        match &mut self.get_mut().owner {
            Owner::Reactor(stream) => Pin::new(stream).poll_write(cx, data),
            Owner::Thread { stream, park } => {
                on_thread(stream, park, true, cx, |mut s| s.write(data))
            }
            Owner::Moving => Poll::Ready(Err(Self::moving())),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match &mut self.get_mut().owner {
            Owner::Reactor(stream) => Pin::new(stream).poll_write_vectored(cx, bufs),
            Owner::Thread { stream, park } => {
                on_thread(stream, park, true, cx, |mut s| s.write_vectored(bufs))
            }
            Owner::Moving => Poll::Ready(Err(Self::moving())),
        }
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &mut self.get_mut().owner {
            Owner::Reactor(stream) => Pin::new(stream).poll_flush(cx),
            // A TCP socket buffers nothing in user space.
            Owner::Thread { .. } | Owner::Moving => Poll::Ready(Ok(())),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &mut self.get_mut().owner {
            Owner::Reactor(stream) => Pin::new(stream).poll_shutdown(cx),
            Owner::Thread { stream, .. } => Poll::Ready(stream.shutdown(Shutdown::Write)),
            Owner::Moving => Poll::Ready(Ok(())),
        }
    }
}
