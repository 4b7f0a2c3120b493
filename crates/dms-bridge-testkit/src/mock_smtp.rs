//! In-process SMTP capture server: the demo's fake "CRM e-mail intake" and the
//! integration tests' mail sink, always bound to 127.0.0.1.
//!
//! It speaks the RFC 5321 subset that plain-text clients such as lettre need:
//! no TLS, no AUTH, no PIPELINING. Accepted messages are decoded with
//! `mail-parser` and kept in memory. Message contents and addresses are
//! customer PII, so only verbs, sizes and queue ids are ever logged.

use std::borrow::Cow;
use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use chrono::{DateTime, Utc};
use mail_parser::{HeaderName, Message, MessageParser};
use serde::Serialize;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::{JoinHandle, JoinSet};
use tokio::time::{Instant, sleep, timeout};
use tracing::debug;

/// Longest accepted line, CRLF included; far above RFC 5321's 1000 octets, so
/// only a misbehaving client hits it.
const MAX_LINE: usize = 64 * 1024;
/// Largest accepted message (advertised as `SIZE`).
const MAX_MESSAGE: usize = 10 * 1024 * 1024;
/// Bounds the envelope so one transaction cannot grow without limit.
const MAX_RECIPIENTS: usize = 100;
const IDLE_TIMEOUT: Duration = Duration::from_secs(60);
const HOST: &str = "localhost";
const VERBS: [&str; 10] = [
    "EHLO", "HELO", "MAIL", "RCPT", "DATA", "RSET", "NOOP", "QUIT", "STARTTLS", "AUTH",
];

/// A running capture server; stops when dropped.
#[derive(Debug)]
pub struct MockSmtp {
    addr: SocketAddr,
    shared: Arc<Shared>,
    acceptor: JoinHandle<()>,
}

/// One accepted message, as the fake CRM saw it.
#[derive(Debug, Clone, Serialize)]
pub struct ReceivedMail {
    /// Envelope `MAIL FROM` address without `<>` (empty for the null sender).
    pub mail_from: String,
    /// Envelope `RCPT TO` addresses without `<>`, in order.
    pub rcpt_to: Vec<String>,
    /// Decoded `Subject` header (RFC 2047 undone).
    pub subject: Option<String>,
    /// `Message-ID` without the surrounding `<>`.
    pub message_id: Option<String>,
    /// Top-level `Content-Type` value as sent, unfolded, e.g. `text/plain; charset=utf-8`.
    pub content_type: Option<String>,
    /// First text part (plain preferred), transfer encoding and charset undone,
    /// inner line endings as sent, trailing line breaks removed; falls back to
    /// a non-text single part, e.g. application/xml.
    pub body: String,
    /// The whole DATA as received: dot-unstuffed, line endings kept, ends with the final CRLF.
    pub raw: String,
    pub received_at: DateTime<Utc>,
}

impl MockSmtp {
    /// Binds 127.0.0.1:port (0 = any free port) and serves until dropped / `shutdown()`.
    pub async fn start(port: u16) -> io::Result<Self> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, port)).await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared::default());
        let acceptor = tokio::spawn(accept_loop(listener, Arc::clone(&shared)));
        debug!(%addr, "mock SMTP listening");
        Ok(Self {
            addr,
            shared,
            acceptor,
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Messages accepted so far (cloned), in order of acceptance.
    pub fn messages(&self) -> Vec<ReceivedMail> {
        self.shared.messages().clone()
    }

    /// Polls until at least `n` messages were accepted or `timeout` elapsed,
    /// then returns all of them (fewer than `n` on timeout).
    pub async fn wait_for(&self, n: usize, timeout: Duration) -> Vec<ReceivedMail> {
        let deadline = Instant::now() + timeout;
        while self.shared.messages().len() < n && Instant::now() < deadline {
            sleep(Duration::from_millis(10)).await;
        }
        self.messages()
    }

    /// The next `n` messages get a transient `451 4.3.0` reply to the end of DATA (message not kept).
    pub fn fail_next(&self, n: usize) {
        self.shared.fail_next.fetch_add(n, Ordering::SeqCst);
    }

    /// The next `n` messages get a permanent `550 5.7.1` reply to the end of DATA (message not kept).
    pub fn reject_next(&self, n: usize) {
        self.shared.reject_next.fetch_add(n, Ordering::SeqCst);
    }

    /// Stops accepting connections and drops the open ones. Takes effect as
    /// soon as the runtime cancels the accept task, not synchronously.
    pub fn shutdown(&self) {
        self.acceptor.abort();
    }
}

impl Drop for MockSmtp {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// State shared by the handle and every connection.
#[derive(Debug, Default)]
struct Shared {
    messages: Mutex<Vec<ReceivedMail>>,
    fail_next: AtomicUsize,
    reject_next: AtomicUsize,
    queued: AtomicU64,
}

impl Shared {
    fn messages(&self) -> MutexGuard<'_, Vec<ReceivedMail>> {
        // A panic elsewhere while holding the lock leaves a Vec that is still valid.
        self.messages.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Decides the reply to the end of DATA, storing the message on success.
    fn deliver(&self, envelope: Envelope, raw: &[u8]) -> String {
        if take_one(&self.fail_next) {
            debug!("injected transient failure");
            return "451 4.3.0 Temporary failure (injected)".into();
        }
        if take_one(&self.reject_next) {
            debug!("injected permanent rejection");
            return "550 5.7.1 Message rejected (injected)".into();
        }
        let id = format!("MOCK{:06}", self.queued.fetch_add(1, Ordering::SeqCst) + 1);
        let recipients = envelope.rcpt_to.len();
        debug!(queue_id = %id, bytes = raw.len(), recipients, "message accepted");
        self.messages().push(ReceivedMail::new(envelope, raw));
        format!("250 2.0.0 Ok: queued as {id}")
    }
}

/// Decrements `counter` if it is positive; true when it did.
fn take_one(counter: &AtomicUsize) -> bool {
    counter
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
        .is_ok()
}

impl ReceivedMail {
    fn new(envelope: Envelope, raw: &[u8]) -> Self {
        let parsed = MessageParser::default().parse(raw);
        let msg = parsed.as_ref();
        Self {
            mail_from: envelope.mail_from.unwrap_or_default(),
            rcpt_to: envelope.rcpt_to,
            subject: msg.and_then(Message::subject).map(str::to_owned),
            message_id: msg.and_then(Message::message_id).map(str::to_owned),
            content_type: msg.and_then(content_type),
            body: msg.map(text_body).unwrap_or_default(),
            raw: String::from_utf8_lossy(raw).into_owned(),
            received_at: Utc::now(),
        }
    }
}

fn content_type(msg: &Message) -> Option<String> {
    let value = msg.header_raw(HeaderName::ContentType)?;
    // Unfold (RFC 5322 §2.2.3) so callers can compare with a one-line value.
    Some(value.replace(['\r', '\n'], "").trim().to_owned())
}

fn text_body(msg: &Message) -> String {
    // mail-parser lists an HTML part as text body when there is no plain one.
    let part = msg.text_part(0).unwrap_or_else(|| msg.root_part());
    let text = String::from_utf8_lossy(part.contents());
    // Clients disagree on a final line break (lettre appends CRLF.CRLF even after
    // one), so trailing ones are dropped to make `body` comparable across clients.
    text.trim_end_matches(['\r', '\n']).to_owned()
}

async fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    // Sessions live in this set so that aborting the acceptor aborts them too.
    let mut sessions = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => {
                    sessions.spawn(serve(stream, peer, Arc::clone(&shared)));
                }
                Err(error) => {
                    // E.g. out of file descriptors: back off instead of spinning.
                    debug!(%error, "accept failed");
                    sleep(Duration::from_millis(50)).await;
                }
            },
            // Reap finished sessions so the set does not grow forever.
            Some(_) = sessions.join_next(), if !sessions.is_empty() => {}
        }
    }
}

async fn serve(stream: TcpStream, peer: SocketAddr, shared: Arc<Shared>) {
    debug!(%peer, "smtp connection opened");
    let (read, writer) = stream.into_split();
    let mut session = Session {
        reader: BufReader::new(read),
        writer,
        shared,
        envelope: Envelope::default(),
    };
    let outcome = match session.converse().await {
        Err(e) if e.kind() == io::ErrorKind::TimedOut => {
            session.reply("421 4.4.2 Idle timeout, closing").await
        }
        other => other,
    };
    match outcome {
        Ok(()) => debug!(%peer, "smtp connection closed"),
        Err(error) => debug!(%peer, %error, "smtp connection failed"),
    }
}

/// The current mail transaction.
#[derive(Debug, Default)]
struct Envelope {
    mail_from: Option<String>,
    rcpt_to: Vec<String>,
}

/// What one capped read produced.
enum Read {
    Line,
    TooLong,
    Closed,
}

struct Session {
    reader: BufReader<OwnedReadHalf>,
    writer: OwnedWriteHalf,
    shared: Arc<Shared>,
    envelope: Envelope,
}

impl Session {
    async fn converse(&mut self) -> io::Result<()> {
        let greeting = format!("220 {HOST} ESMTP dms-bridge-mock");
        self.reply(&greeting).await?;
        let mut line = Vec::new();
        loop {
            match self.read_line(&mut line).await? {
                Read::Line => {
                    let text = String::from_utf8_lossy(&line);
                    if !self.command(text.trim_end_matches(['\r', '\n'])).await? {
                        return Ok(());
                    }
                }
                Read::TooLong => self.reply("500 5.5.2 Line too long").await?,
                Read::Closed => return Ok(()),
            }
        }
    }

    /// Reads one line (LF or CRLF) into `buf`, never buffering more than `MAX_LINE`;
    /// the rest of an overlong line is read and dropped. Fails with `TimedOut`
    /// when the client stays silent for `IDLE_TIMEOUT`.
    async fn read_line(&mut self, buf: &mut Vec<u8>) -> io::Result<Read> {
        let mut overlong = false;
        loop {
            buf.clear();
            let mut limited = (&mut self.reader).take(MAX_LINE as u64);
            let n = timeout(IDLE_TIMEOUT, limited.read_until(b'\n', buf))
                .await
                .map_err(|_| io::Error::new(io::ErrorKind::TimedOut, "idle timeout"))??;
            if buf.ends_with(b"\n") {
                return Ok(if overlong { Read::TooLong } else { Read::Line });
            }
            if n < MAX_LINE {
                // End of stream, possibly in the middle of a line.
                return Ok(Read::Closed);
            }
            overlong = true;
        }
    }

    /// Handles one command line; returns false when the connection should close.
    async fn command(&mut self, line: &str) -> io::Result<bool> {
        let (word, arg) = line.split_once(' ').unwrap_or((line, ""));
        // Only known verbs are logged: anything else may be stray message content.
        let verb = VERBS.into_iter().find(|v| v.eq_ignore_ascii_case(word));
        debug!(verb = verb.unwrap_or("<unknown>"), "smtp command");
        if matches!(verb, Some("EHLO" | "HELO" | "RSET")) {
            // A new greeting implies RSET (RFC 5321 §4.1.4).
            self.envelope = Envelope::default();
        }
        let reply: Cow<'static, str> = match verb {
            Some("EHLO") => {
                format!("250-{HOST}\r\n250-8BITMIME\r\n250-SMTPUTF8\r\n250 SIZE {MAX_MESSAGE}")
                    .into()
            }
            Some("HELO") => format!("250 {HOST}").into(),
            Some("MAIL") => self.mail(arg).into(),
            Some("RCPT") => self.rcpt(arg).into(),
            Some("DATA") => return self.data().await,
            Some("RSET" | "NOOP") => "250 2.0.0 Ok".into(),
            Some("QUIT") => {
                self.reply("221 2.0.0 Bye").await?;
                return Ok(false);
            }
            Some(_) => "502 5.5.1 Command not implemented".into(),
            None => "500 5.5.2 Command not recognized".into(),
        };
        self.reply(&reply).await?;
        Ok(true)
    }

    fn mail(&mut self, arg: &str) -> &'static str {
        if self.envelope.mail_from.is_some() {
            return "503 5.5.1 Nested MAIL command";
        }
        // Parameters such as BODY=8BITMIME or SIZE=n need no action here.
        match parse_path(arg, "FROM:") {
            Some(addr) => {
                self.envelope.mail_from = Some(addr.to_owned());
                "250 2.1.0 Ok"
            }
            None => "501 5.5.4 Syntax: MAIL FROM:<address>",
        }
    }

    fn rcpt(&mut self, arg: &str) -> &'static str {
        if self.envelope.mail_from.is_none() {
            return "503 5.5.1 Need MAIL before RCPT";
        }
        if self.envelope.rcpt_to.len() >= MAX_RECIPIENTS {
            return "452 4.5.3 Too many recipients";
        }
        match parse_path(arg, "TO:") {
            Some(addr) if !addr.is_empty() => {
                self.envelope.rcpt_to.push(addr.to_owned());
                "250 2.1.5 Ok"
            }
            _ => "501 5.5.4 Syntax: RCPT TO:<address>",
        }
    }

    async fn data(&mut self) -> io::Result<bool> {
        if self.envelope.rcpt_to.is_empty() {
            self.reply("503 5.5.1 Need RCPT before DATA").await?;
            return Ok(true);
        }
        self.reply("354 End data with <CR><LF>.<CR><LF>").await?;
        // The transaction ends with DATA whatever the outcome (RFC 5321 §4.1.1.4).
        let envelope = std::mem::take(&mut self.envelope);
        let reply = match self.read_message().await? {
            Some(raw) => self.shared.deliver(envelope, &raw),
            None => "552 5.3.4 Message too big".into(),
        };
        self.reply(&reply).await?;
        Ok(true)
    }

    /// Reads DATA up to the lone `.` line, undoing dot-stuffing (RFC 5321 §4.5.2).
    /// An oversize message is read to its end but dropped (`None`), so the session
    /// stays usable.
    async fn read_message(&mut self) -> io::Result<Option<Vec<u8>>> {
        let mut raw = Vec::new();
        let mut line = Vec::new();
        let mut too_big = false;
        loop {
            match self.read_line(&mut line).await? {
                Read::Line if line == b".\r\n" || line == b".\n" => break,
                Read::Line => {
                    let content = line.strip_prefix(b".").unwrap_or(&line);
                    too_big |= raw.len() + content.len() > MAX_MESSAGE;
                    if !too_big {
                        raw.extend_from_slice(content);
                    }
                }
                Read::TooLong => too_big = true,
                Read::Closed => return Err(io::ErrorKind::UnexpectedEof.into()),
            }
        }
        Ok((!too_big).then_some(raw))
    }

    async fn reply(&mut self, reply: &str) -> io::Result<()> {
        self.writer
            .write_all(format!("{reply}\r\n").as_bytes())
            .await
    }
}

/// Extracts the address (no `<>`) from `FROM:<addr> [params]`; tolerates a
/// space after the colon and a missing `<>`, as some clients send.
fn parse_path<'a>(arg: &'a str, keyword: &str) -> Option<&'a str> {
    let head = arg.get(..keyword.len())?;
    if !head.eq_ignore_ascii_case(keyword) {
        return None;
    }
    let rest = arg.get(keyword.len()..)?.trim_start();
    match rest.strip_prefix('<') {
        Some(inner) => inner.split_once('>').map(|(addr, _)| addr),
        None => rest.split_whitespace().next(),
    }
}
