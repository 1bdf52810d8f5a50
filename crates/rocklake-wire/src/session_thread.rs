//! The executor of a session's thread: the session's future runs on the
//! thread that owns its client socket, and the thread sleeps in `poll(2)` on
//! that socket and on a wake-up pipe, as a PostgreSQL backend sleeps on its
//! socket.
//!
//! Before, the session thread ran its future with the runtime's
//! `Handle::block_on` while the socket was registered with the runtime's
//! reactor: every client message woke a runtime worker (its `epoll_wait`),
//! which woke a second worker to look for work and then unparked the session
//! thread, three wake-ups per message where PostgreSQL has one
//! (docs/benchmarks.md, "Hand-offs per commit"). Here the socket is taken
//! out of the reactor ([`crate::socket::ClientSocket::move_to_thread`]) and
//! a message wakes the session thread only.
//!
//! Everything else the session awaits (SlateDB, timers, the interrupt, the
//! shutdown signal) still completes on the runtime and wakes the session
//! through its [`Waker`], a byte on the wake-up pipe; the thread enters the
//! runtime's context so timers and spawned tasks work as before.

use std::future::Future;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::pin::pin;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};

/// The thread is polling its future (or about to).
const RUNNING: u8 = 0;
/// A wake-up came while the thread was running: poll again before sleeping.
const NOTIFIED: u8 = 1;
/// The thread sleeps in `poll(2)`: a wake-up must write to the pipe.
const SLEEPING: u8 = 2;

/// What the session's socket waits for: readable or writable, and the waker
/// of the future that asked.
#[derive(Default)]
struct SocketWait {
    fd: Option<RawFd>,
    readable: Option<Waker>,
    writable: Option<Waker>,
}

/// The sleeping place of one session thread and its [`Waker`].
pub struct ThreadPark {
    state: AtomicU8,
    wake_write: UnixStream,
    wake_read: UnixStream,
    socket: Mutex<SocketWait>,
}

impl ThreadPark {
    /// A park with its wake-up pipe.
    pub fn new() -> io::Result<Arc<Self>> {
        let (wake_write, wake_read) = UnixStream::pair()?;
        wake_write.set_nonblocking(true)?;
        wake_read.set_nonblocking(true)?;
        Ok(Arc::new(ThreadPark {
            state: AtomicU8::new(RUNNING),
            wake_write,
            wake_read,
            socket: Mutex::new(SocketWait::default()),
        }))
    }

    /// Asks the next sleep to end when `fd` is readable (`write` false) or
    /// writable (`write` true), then to wake `waker`. Called by a socket
    /// operation that would block, before it returns `Pending`.
    pub fn wait_for_socket(&self, fd: RawFd, write: bool, waker: &Waker) {
        let mut wait = self.socket.lock().unwrap_or_else(|e| e.into_inner());
        wait.fd = Some(fd);
        let slot = if write {
            &mut wait.writable
        } else {
            &mut wait.readable
        };
        *slot = Some(waker.clone());
    }

    /// Sleeps until a wake-up or until the socket is ready for what was
    /// asked; returns at once when a wake-up came since the last poll.
    fn sleep(&self, own: &Waker) {
        let wait = std::mem::take(&mut *self.socket.lock().unwrap_or_else(|e| e.into_inner()));
        if self
            .state
            .compare_exchange(RUNNING, SLEEPING, Ordering::SeqCst, Ordering::SeqCst)
            .is_err()
        {
            // Woken while running: poll again.
            self.state.store(RUNNING, Ordering::SeqCst);
            self.wake_socket_waiters(wait, true, true, own);
            return;
        }
        let mut events: libc::c_short = 0;
        if wait.readable.is_some() {
            events |= libc::POLLIN;
        }
        if wait.writable.is_some() {
            events |= libc::POLLOUT;
        }
        let mut fds = [
            libc::pollfd {
                fd: self.wake_read.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: wait.fd.unwrap_or(-1),
                events,
                revents: 0,
            },
        ];
        let count = if wait.fd.is_some() && events != 0 {
            2
        } else {
            1
        };
        // SAFETY: `fds` is a valid array of `count` pollfds that outlives the
        // call; a negative timeout waits until one is ready (or a signal).
        let ready = unsafe { libc::poll(fds.as_mut_ptr(), count, -1) };
        self.state.store(RUNNING, Ordering::SeqCst);
        if ready < 0 {
            // Interrupted by a signal: poll the future again, which asks again.
            self.wake_socket_waiters(wait, true, true, own);
            return;
        }
        if fds[0].revents != 0 {
            self.drain_wake_pipe();
        }
        let socket = fds[1].revents;
        let errors = libc::POLLERR | libc::POLLHUP | libc::POLLNVAL;
        let readable = count == 2 && socket & (libc::POLLIN | errors) != 0;
        let writable = count == 2 && socket & (libc::POLLOUT | errors) != 0;
        self.wake_socket_waiters(wait, readable, writable, own);
    }

    /// Wakes the futures that waited for the socket and got what they
    /// waited for; the others keep waiting at the next sleep. The thread's
    /// own waker is not woken: the thread polls its future after each sleep
    /// anyway.
    fn wake_socket_waiters(&self, wait: SocketWait, readable: bool, writable: bool, own: &Waker) {
        let mut keep = SocketWait {
            fd: wait.fd,
            ..SocketWait::default()
        };
        for (waker, ready, slot) in [
            (wait.readable, readable, &mut keep.readable),
            (wait.writable, writable, &mut keep.writable),
        ] {
            match waker {
                Some(waker) if ready => {
                    if !waker.will_wake(own) {
                        waker.wake();
                    }
                }
                waiting => *slot = waiting,
            }
        }
        if keep.readable.is_some() || keep.writable.is_some() {
            let mut wait = self.socket.lock().unwrap_or_else(|e| e.into_inner());
            wait.fd = keep.fd;
            wait.readable = wait.readable.take().or(keep.readable);
            wait.writable = wait.writable.take().or(keep.writable);
        }
    }

    fn drain_wake_pipe(&self) {
        let mut buffer = [0u8; 64];
        while matches!((&self.wake_read).read(&mut buffer), Ok(n) if n > 0) {}
    }
}

impl Wake for ThreadPark {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if self.state.swap(NOTIFIED, Ordering::SeqCst) == SLEEPING {
            // A full pipe already holds a wake-up: nothing is lost.
            let _ = (&self.wake_write).write(&[1]);
        }
    }
}

/// Runs `future` to completion on this thread, sleeping on `park` whenever
/// it waits. The caller enters the runtime's context first, so timers and
/// spawned tasks inside the future work.
pub fn block_on<F: Future>(park: &Arc<ThreadPark>, future: F) -> F::Output {
    let waker = Waker::from(Arc::clone(park));
    let mut context = Context::from_waker(&waker);
    let mut future = pin!(future);
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut context) {
            return output;
        }
        park.sleep(&waker);
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;
    use crate::socket::ClientSocket;

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap()
    }

    /// A connected pair: the server side as a session thread's socket, the
    /// client side as a blocking std stream.
    fn socket_pair(
        rt: &tokio::runtime::Runtime,
    ) -> (ClientSocket, std::net::TcpStream, Arc<ThreadPark>) {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (server, _) = listener.accept().unwrap();
        server.set_nonblocking(true).unwrap();
        let server = {
            let _context = rt.enter();
            tokio::net::TcpStream::from_std(server).unwrap()
        };
        let park = ThreadPark::new().unwrap();
        let mut socket = ClientSocket::new(server);
        socket.move_to_thread(Arc::clone(&park)).unwrap();
        (socket, client, park)
    }

    /// Runs `future` on a thread of its own, as a session runs.
    fn on_session_thread<F>(
        rt: &tokio::runtime::Runtime,
        park: Arc<ThreadPark>,
        future: F,
    ) -> F::Output
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let handle = rt.handle().clone();
        std::thread::spawn(move || {
            let _context = handle.enter();
            block_on(&park, future)
        })
        .join()
        .unwrap()
    }

    #[test]
    fn a_wake_from_another_thread_ends_the_sleep() {
        let rt = runtime();
        let park = ThreadPark::new().unwrap();
        let (send, receive) = tokio::sync::oneshot::channel();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(30));
            send.send(7).unwrap();
        });
        assert_eq!(on_session_thread(&rt, park, receive).unwrap(), 7);
    }

    #[test]
    fn bytes_arriving_on_the_socket_end_the_sleep() {
        let rt = runtime();
        let (mut socket, mut client, park) = socket_pair(&rt);
        let writer = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(30));
            client.write_all(b"hello").unwrap();
            client
        });
        let read = on_session_thread(&rt, park, async move {
            let mut buffer = [0u8; 5];
            socket.read_exact(&mut buffer).await.map(|_| buffer)
        });
        assert_eq!(&read.unwrap(), b"hello");
        drop(writer.join().unwrap());
    }

    #[test]
    fn a_timer_ends_a_wait_for_the_socket() {
        let rt = runtime();
        let (mut socket, client, park) = socket_pair(&rt);
        let outcome = on_session_thread(&rt, park, async move {
            let mut buffer = [0u8; 1];
            tokio::select! {
                _ = socket.read(&mut buffer) => "read",
                _ = tokio::time::sleep(Duration::from_millis(50)) => "timer",
            }
        });
        assert_eq!(outcome, "timer");
        drop(client);
    }

    #[test]
    fn a_write_larger_than_the_socket_buffers_waits_for_the_reader() {
        let rt = runtime();
        let (mut socket, mut client, park) = socket_pair(&rt);
        let size = 16 * 1024 * 1024;
        let reader = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            let mut received = Vec::new();
            client.read_to_end(&mut received).unwrap();
            received.len()
        });
        let written = on_session_thread(&rt, park, async move {
            socket.write_all(&vec![7u8; size]).await?;
            socket.shutdown().await
        });
        written.unwrap();
        assert_eq!(reader.join().unwrap(), size);
    }

    #[test]
    fn the_end_of_the_stream_is_read_as_such() {
        let rt = runtime();
        let (mut socket, client, park) = socket_pair(&rt);
        drop(client);
        let read = on_session_thread(&rt, park, async move {
            let mut buffer = Vec::new();
            socket.read_to_end(&mut buffer).await
        });
        assert_eq!(read.unwrap(), 0);
    }
}
