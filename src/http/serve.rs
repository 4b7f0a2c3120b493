//! The accept loop in front of the router: HTTP/1.1 on hyper's connection
//! builder, with the timeouts and the connection cap `axum::serve` lacks.
//!
//! - A connection cap (`server.max_connections`, fitted under the process's
//!   open-file limit). When it is reached, a new connection takes the place
//!   of the connection idle the longest (one that never sent a request first,
//!   then kept-alive ones; never one with a request in flight), so a flood of
//!   idle sockets cannot lock callers out: each caller that connects and asks
//!   pushes one idle socket out. With no idle connection to replace, a small
//!   overflow lane (`server.overflow_connections`) gives a connection
//!   `server.overflow_grace` to send its request head: `GET /healthz` and
//!   `/readyz` are answered, anything else gets 503 with `Retry-After`; every
//!   answer there says `Connection: close`. Past both bounds a connection is
//!   closed at once, so idle sockets can never use up the process's
//!   descriptors.
//! - Per connection, a watchdog: a new connection must finish its first request
//!   head within `server.header_read_timeout`; a kept-alive one with no request
//!   in flight is closed after `server.idle_timeout`, and once the next head's
//!   first byte arrives it has `header_read_timeout` to finish it. The body
//!   deadline is the router's (`front::read_jsonrpc`).
//!
//! hyper's own `header_read_timeout` (hyper 1.12, `proto/h1/conn.rs`
//! `poll_read_head`) starts its timer whenever the connection waits for a
//! head: on a new connection, and on a kept-alive one as soon as the previous
//! response is written, before any byte of the next head. On its own it would
//! close idle kept-alive connections after the head timeout, so it cannot give
//! a longer idle timeout. Here it is set to `idle_timeout +
//! header_read_timeout`, the longest a connection may legitimately wait from
//! the end of one response to the end of the next head, as a backstop to the
//! watchdog.
//!
//! HTTP/2 is not served, as before: in a production build axum's `serve` had
//! only hyper's HTTP/1 (axum's `http2` feature is off).

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{HeaderValue, Method, Request, Response, StatusCode, header};
use bytes::Bytes;
use http_body::{Frame, SizeHint};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore, oneshot, watch};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

use crate::config::ServerConfig;

/// Descriptors kept free for everything but client connections: upstream HTTP
/// pools, SMTP, the store, log files, the runtime's own.
pub const FD_RESERVE: u64 = 128;

/// Time an overflow connection has, after its head, to take its answer.
const OVERFLOW_ANSWER_TIME: Duration = Duration::from_secs(2);

/// A connection idle for less than this is not pushed out for a new one: a
/// caller that has just connected has not had time to send its head.
const REPLACEABLE_AFTER: Duration = Duration::from_millis(50);

/// How long a new connection waits for the one it replaces to close.
const REPLACE_WITHIN: Duration = Duration::from_secs(1);

/// What the accept loop needs from config.
#[derive(Debug, Clone)]
pub struct ServeSettings {
    pub header_read_timeout: Duration,
    pub idle_timeout: Duration,
    pub max_connections: usize,
    pub overflow_connections: usize,
    pub overflow_grace: Duration,
}

impl ServeSettings {
    pub fn from_config(server: &ServerConfig) -> Self {
        Self {
            header_read_timeout: server.header_read_timeout,
            idle_timeout: server.idle_timeout,
            max_connections: server.max_connections,
            overflow_connections: server.overflow_connections,
            overflow_grace: server.overflow_grace,
        }
    }
}

/// Raises this process's open-file soft limit to its hard limit; returns the
/// new soft limit. Called once at start by `serve`, not by the accept loop,
/// so that a test can run the loop under a limit of its own.
pub fn raise_fd_limit() -> Option<u64> {
    #[cfg(unix)]
    {
        match rlimit::increase_nofile_limit(u64::MAX) {
            Ok(limit) => Some(limit),
            Err(e) => {
                tracing::warn!(error = %e, "Could not raise the open-file limit.");
                None
            }
        }
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// The process's open-file soft limit, where there is one.
fn fd_limit() -> Option<u64> {
    #[cfg(unix)]
    {
        rlimit::getrlimit(rlimit::Resource::NOFILE)
            .ok()
            .map(|(soft, _)| soft)
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// `wanted` connections, or fewer if they and the overflow lane would not fit
/// under the open-file limit with [`FD_RESERVE`] to spare.
fn fitted_cap(wanted: usize, overflow: usize) -> usize {
    let Some(limit) = fd_limit() else {
        return wanted;
    };
    let room = limit
        .saturating_sub(FD_RESERVE)
        .saturating_sub(overflow as u64);
    let room = usize::try_from(room).unwrap_or(usize::MAX).max(1);
    if wanted > room {
        tracing::warn!(
            max_connections = wanted,
            fd_limit = limit,
            serving = room,
            "server.max_connections does not fit under the open-file limit; serving fewer."
        );
        room
    } else {
        wanted
    }
}

/// Serves `app` on `listener` until `shutdown` completes, then stops
/// accepting, lets calls in flight finish and returns once every connection
/// has closed. Each request carries `ConnectInfo<SocketAddr>`.
pub async fn serve<F>(listener: TcpListener, app: Router, settings: &ServeSettings, shutdown: F)
where
    F: Future<Output = ()> + Send,
{
    // New connections waiting for an idle one's place are bounded like the
    // overflow lane, and fitted under the open-file limit with it.
    let cap = fitted_cap(settings.max_connections, settings.overflow_connections * 2);
    let main = Arc::new(Semaphore::new(cap));
    let lane = Lane::default();
    let replacing = Arc::new(Semaphore::new(settings.overflow_connections.max(1)));
    let overflow = Arc::new(Semaphore::new(settings.overflow_connections));
    let timeouts = Timeouts {
        header: settings.header_read_timeout,
        idle: settings.idle_timeout,
    };
    let stop = CancellationToken::new();
    // Every connection task holds a receiver; the sender learns when all are gone.
    let (all_closed, open) = watch::channel(());
    let refusals = Refusals::default();
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    if !is_connection_error(&e) {
                        // Out of descriptors, say: wait a little rather than spin.
                        tracing::error!(error = %e, "accept failed");
                        tokio::select! {
                            () = tokio::time::sleep(Duration::from_millis(100)) => {}
                            () = &mut shutdown => break,
                        }
                    }
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let served = Served {
            app: app.clone(),
            timeouts,
            stop: stop.clone(),
            lane: lane.clone(),
        };
        if let Ok(permit) = main.clone().try_acquire_owned() {
            tokio::spawn(connection(stream, peer, served, (open.clone(), permit)));
            continue;
        }
        // Over the cap: take the place of the connection idle the longest,
        // which hands its place over when it has closed.
        let waiting = replacing.clone().try_acquire_owned().ok();
        let handed = waiting.as_ref().and_then(|_| lane.push_out_longest_idle());
        if let (Some(waiting), Some(handed)) = (waiting, handed) {
            let open = open.clone();
            tokio::spawn(async move {
                let place = tokio::time::timeout(REPLACE_WITHIN, handed).await;
                drop(waiting);
                if let Ok(Ok(permit)) = place {
                    connection(stream, peer, served, (open, permit)).await;
                }
            });
        } else if let Ok(permit) = overflow.clone().try_acquire_owned() {
            refusals.note(cap, false);
            tokio::spawn(overflow_connection(
                stream,
                peer,
                served.app,
                settings.overflow_grace,
                (open.clone(), permit),
            ));
        } else {
            refusals.note(cap, true);
            drop(stream);
        }
    }
    drop(listener);
    stop.cancel();
    drop(open);
    all_closed.closed().await;
}

/// Errors of one connection that say nothing about the listener.
fn is_connection_error(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
    )
}

/// Over-cap connections, logged at most every 10 s so a flood does not flood the log.
#[derive(Default)]
struct Refusals {
    last_logged: std::sync::Mutex<Option<std::time::Instant>>,
    overflowed: AtomicU64,
    closed: AtomicU64,
}

impl Refusals {
    fn note(&self, cap: usize, closed: bool) {
        let counter = if closed {
            &self.closed
        } else {
            &self.overflowed
        };
        counter.fetch_add(1, Ordering::Relaxed);
        let Ok(mut last) = self.last_logged.lock() else {
            return;
        };
        if last.is_some_and(|t| t.elapsed() < Duration::from_secs(10)) {
            return;
        }
        *last = Some(std::time::Instant::now());
        tracing::warn!(
            max_connections = cap,
            overflowed = self.overflowed.swap(0, Ordering::Relaxed),
            closed = self.closed.swap(0, Ordering::Relaxed),
            "Connection cap reached: over-cap connections get only /healthz and /readyz, or are closed."
        );
    }
}

#[derive(Debug, Clone, Copy)]
struct Timeouts {
    header: Duration,
    idle: Duration,
}

/// What a connection within the cap is served with.
struct Served {
    app: Router,
    timeouts: Timeouts,
    stop: CancellationToken,
    lane: Lane,
}

/// The connections within the cap, so that a new one can take the place of
/// the one idle the longest.
#[derive(Clone, Default)]
struct Lane {
    next_id: Arc<AtomicU64>,
    open: Arc<std::sync::Mutex<std::collections::HashMap<u64, Arc<Activity>>>>,
}

impl Lane {
    fn join(&self, activity: Arc<Activity>) -> LaneSeat {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        if let Ok(mut open) = self.open.lock() {
            open.insert(id, activity);
        }
        LaneSeat {
            lane: self.clone(),
            id,
        }
    }

    /// Tells the connection idle the longest to close and hand its place
    /// over: one that never sent a request before any that did, never one
    /// with a request in flight. `None` when none has been idle for
    /// [`REPLACEABLE_AFTER`].
    fn push_out_longest_idle(&self) -> Option<oneshot::Receiver<OwnedSemaphorePermit>> {
        let open = self.open.lock().ok()?;
        let longest = open
            .values()
            .filter_map(|a| Some((a.idle_rank()?, a)))
            .filter(|((_, since), _)| since.elapsed() >= REPLACEABLE_AFTER)
            .min_by_key(|(rank, _)| *rank);
        let (_, activity) = longest?;
        Some(activity.push_out())
    }
}

/// A connection's place in the [`Lane`], given back when it closes.
struct LaneSeat {
    lane: Lane,
    id: u64,
}

impl Drop for LaneSeat {
    fn drop(&mut self) {
        if let Ok(mut open) = self.lane.open.lock() {
            open.remove(&self.id);
        }
    }
}

/// A connection within the cap, watched until it closes.
async fn connection(
    stream: TcpStream,
    peer: SocketAddr,
    served: Served,
    held: (watch::Receiver<()>, OwnedSemaphorePermit),
) {
    let Served {
        app,
        timeouts,
        stop,
        lane,
    } = served;
    let activity = Arc::new(Activity::new());
    let _seat = lane.join(activity.clone());
    let io = TokioIo::new(Watched {
        inner: Some(stream),
        activity: activity.clone(),
    });
    let service = ConnectionService {
        app,
        peer,
        activity: activity.clone(),
    };
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(timeouts.header.saturating_add(timeouts.idle));
    let conn = builder.serve_connection(io, service);
    tokio::pin!(conn);
    let mut shutting_down = false;
    loop {
        let deadline = activity.deadline(timeouts);
        tokio::select! {
            result = conn.as_mut() => {
                if let Err(e) = result {
                    tracing::debug!(%peer, error = %e, "Connection ended with an error.");
                    if e.is_parse_too_large() {
                        activity.linger.store(true, Ordering::Release);
                    }
                }
                break;
            }
            () = stop.cancelled(), if !shutting_down => {
                if activity.never_used() {
                    break;
                }
                // An idle kept-alive connection closes now; a call in flight
                // finishes and its answer is written first.
                conn.as_mut().graceful_shutdown();
                shutting_down = true;
            }
            () = activity.changed.notified() => {
                if activity.pushed_out() && !shutting_down {
                    tracing::debug!(%peer, "Closing an idle connection for a new one over the cap.");
                    if activity.never_used() {
                        break;
                    }
                    // A request that raced the push finishes first.
                    conn.as_mut().graceful_shutdown();
                    shutting_down = true;
                }
            }
            () = sleep_until(deadline), if deadline.is_some() => {
                if activity.deadline(timeouts).is_some_and(|d| d <= Instant::now()) {
                    tracing::debug!(%peer, "Closing a connection that sent no request in time.");
                    break;
                }
            }
        }
    }
    // Pushed out: the place goes to the connection that pushed, not back to
    // the pool, where the next connection accepted could take it first.
    let (_open, permit) = held;
    if let Some(handoff) = activity.take_handoff() {
        let _ = handoff.send(permit);
    }
}

async fn sleep_until(deadline: Option<Instant>) {
    if let Some(deadline) = deadline {
        tokio::time::sleep_until(deadline).await;
    }
}

/// An over-cap connection: one short look at its head, one answer, closed.
async fn overflow_connection(
    stream: TcpStream,
    peer: SocketAddr,
    app: Router,
    grace: Duration,
    _held: (watch::Receiver<()>, OwnedSemaphorePermit),
) {
    let service = hyper::service::service_fn(move |request: Request<Incoming>| {
        let app = app.clone();
        async move {
            let health = matches!(*request.method(), Method::GET | Method::HEAD)
                && matches!(request.uri().path(), "/healthz" | "/readyz");
            let mut response = if health {
                let mut request = request.map(Body::new);
                request.extensions_mut().insert(ConnectInfo(peer));
                match app.oneshot(request).await {
                    Ok(response) => response,
                    Err(never) => match never {},
                }
            } else {
                busy()
            };
            response
                .headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
            Ok::<_, Infallible>(response)
        }
    });
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(grace)
        .keep_alive(false);
    let conn = builder.serve_connection(TokioIo::new(stream), service);
    let _ = tokio::time::timeout(grace.saturating_add(OVERFLOW_ANSWER_TIME), conn).await;
}

/// The answer to an MCP (or any other) request over the connection cap.
fn busy() -> Response<Body> {
    let mut response = Response::new(Body::from(
        "Service Unavailable: the server is at its connection limit; retry shortly",
    ));
    *response.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
    let headers = response.headers_mut();
    headers.insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

/// What a connection is doing, for its watchdog. Times are milliseconds since
/// the connection was accepted.
struct Activity {
    epoch: Instant,
    /// Requests whose answer has not been written yet.
    in_flight: AtomicUsize,
    /// Whether a request has started on this connection.
    served: AtomicBool,
    /// When the connection was accepted or last had nothing in flight.
    idle_since: AtomicU64,
    /// When the first byte of the next head arrived, or [`NONE`].
    head_since: AtomicU64,
    /// A new connection over the cap takes this idle one's place.
    pushed_out: AtomicBool,
    /// Its head was refused as too large: close it lingering.
    linger: AtomicBool,
    /// Where this connection's place goes when it closes, once pushed out.
    handoff: std::sync::Mutex<Option<oneshot::Sender<OwnedSemaphorePermit>>>,
    /// Wakes the watchdog when the deadline moves.
    changed: Notify,
}

const NONE: u64 = u64::MAX;

impl Activity {
    fn new() -> Self {
        Self {
            epoch: Instant::now(),
            in_flight: AtomicUsize::new(0),
            served: AtomicBool::new(false),
            idle_since: AtomicU64::new(0),
            head_since: AtomicU64::new(NONE),
            pushed_out: AtomicBool::new(false),
            linger: AtomicBool::new(false),
            handoff: std::sync::Mutex::new(None),
            changed: Notify::new(),
        }
    }

    /// How long this connection has been idle, for choosing one to push out:
    /// `(0, since)` never used, `(1, since)` kept alive between requests;
    /// `None` with a request in flight (or already pushed out).
    fn idle_rank(&self) -> Option<((u8, Instant), Instant)> {
        if self.in_flight.load(Ordering::Acquire) > 0 || self.pushed_out() {
            return None;
        }
        let since = self.epoch + Duration::from_millis(self.idle_since.load(Ordering::Acquire));
        let used = u8::from(self.served.load(Ordering::Acquire));
        Some(((used, since), since))
    }

    /// Marks this connection to close; its place arrives on the receiver.
    fn push_out(&self) -> oneshot::Receiver<OwnedSemaphorePermit> {
        let (place, handed) = oneshot::channel();
        if let Ok(mut handoff) = self.handoff.lock() {
            *handoff = Some(place);
        }
        self.pushed_out.store(true, Ordering::Release);
        self.changed.notify_one();
        handed
    }

    fn take_handoff(&self) -> Option<oneshot::Sender<OwnedSemaphorePermit>> {
        self.handoff.lock().ok()?.take()
    }

    fn pushed_out(&self) -> bool {
        self.pushed_out.load(Ordering::Acquire)
    }

    fn now(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(NONE - 1)
    }

    /// Bytes arrived. With nothing in flight they start the next head.
    fn on_read(&self) {
        if self.in_flight.load(Ordering::Acquire) == 0
            && self
                .head_since
                .compare_exchange(NONE, self.now(), Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
        {
            self.changed.notify_one();
        }
    }

    /// No request has started on this connection yet.
    fn never_used(&self) -> bool {
        !self.served.load(Ordering::Acquire) && self.in_flight.load(Ordering::Acquire) == 0
    }

    fn request_started(&self) {
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        self.served.store(true, Ordering::Release);
        self.head_since.store(NONE, Ordering::Release);
    }

    fn request_finished(&self) {
        if self.in_flight.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.idle_since.store(self.now(), Ordering::Release);
            self.head_since.store(NONE, Ordering::Release);
            self.changed.notify_one();
        }
    }

    /// When the connection is to be closed if nothing happens; `None` while a
    /// request is in flight.
    fn deadline(&self, t: Timeouts) -> Option<Instant> {
        if self.in_flight.load(Ordering::Acquire) > 0 {
            return None;
        }
        let head_since = self.head_since.load(Ordering::Acquire);
        let idle_since = self.idle_since.load(Ordering::Acquire);
        let (from, allowed) = if !self.served.load(Ordering::Acquire) {
            (idle_since, t.header)
        } else if head_since != NONE {
            (head_since, t.header)
        } else {
            (idle_since, t.idle)
        };
        Some(self.epoch + Duration::from_millis(from) + allowed)
    }
}

/// The socket, telling the watchdog when bytes arrive. `None` only once
/// dropped (see [`Drop`]).
struct Watched {
    inner: Option<TcpStream>,
    activity: Arc<Activity>,
}

/// How long, and how much, a refused head's sender is read and ignored
/// after the answer, so that it reads the answer (see [`Watched`]'s drop).
const LINGER_FOR: Duration = Duration::from_secs(2);
const LINGER_BYTES: usize = 8 * 1024 * 1024;

impl Watched {
    fn stream(&mut self) -> io::Result<&mut TcpStream> {
        self.inner
            .as_mut()
            .ok_or_else(|| io::Error::from(io::ErrorKind::NotConnected))
    }
}

impl Drop for Watched {
    /// A head too large for the server (hyper answers 431) is usually still
    /// arriving when the answer is written; closing at once would make the
    /// kernel reset the connection and the client would lose the 431. So the
    /// rest is read and dropped for a moment first (a lingering close).
    fn drop(&mut self) {
        let Some(mut stream) = self.inner.take() else {
            return;
        };
        if !self.activity.linger.load(Ordering::Acquire) {
            return;
        }
        tokio::spawn(async move {
            use tokio::io::AsyncReadExt;
            let mut buf = vec![0u8; 64 * 1024];
            let mut read = 0;
            let drain = async {
                while read < LINGER_BYTES {
                    match stream.read(&mut buf).await {
                        Ok(0) | Err(_) => break,
                        Ok(n) => read += n,
                    }
                }
            };
            let _ = tokio::time::timeout(LINGER_FOR, drain).await;
        });
    }
}

impl AsyncRead for Watched {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let polled = Pin::new(this.stream()?).poll_read(cx, buf);
        if matches!(polled, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            this.activity.on_read();
        }
        polled
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(self.get_mut().stream()?).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(self.get_mut().stream()?).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner
            .as_ref()
            .is_some_and(TcpStream::is_write_vectored)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(self.get_mut().stream()?).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(self.get_mut().stream()?).poll_shutdown(cx)
    }
}

/// The router as one connection's hyper service: adds `ConnectInfo` and keeps
/// the request counted as in flight until its answer's body is written.
#[derive(Clone)]
struct ConnectionService {
    app: Router,
    peer: SocketAddr,
    activity: Arc<Activity>,
}

type BoxedFuture = Pin<Box<dyn Future<Output = Result<Response<Body>, Infallible>> + Send>>;

impl hyper::service::Service<Request<Incoming>> for ConnectionService {
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = BoxedFuture;

    fn call(&self, request: Request<Incoming>) -> Self::Future {
        self.activity.request_started();
        let in_flight = InFlight(self.activity.clone());
        let mut request = request.map(Body::new);
        request.extensions_mut().insert(ConnectInfo(self.peer));
        let app = self.app.clone();
        Box::pin(async move {
            let response = match app.oneshot(request).await {
                Ok(response) => response,
                Err(never) => match never {},
            };
            Ok(response.map(|body| {
                Body::new(Counted {
                    inner: body,
                    _in_flight: in_flight,
                })
            }))
        })
    }
}

/// Ends a request's time in flight when dropped.
struct InFlight(Arc<Activity>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.request_finished();
    }
}

/// An answer's body that holds its request in flight until hyper drops it.
struct Counted {
    inner: Body,
    _in_flight: InFlight,
}

impl http_body::Body for Counted {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
