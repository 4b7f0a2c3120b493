//! Real-TCP tests of the mock SMTP server, with lettre and hand-written sessions as clients.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::SocketAddr;
use std::time::Duration;

use dms_bridge_testkit::mock_smtp::*;
use lettre::message::header::{ContentTransferEncoding, ContentType};
use lettre::message::{Body, Mailbox};
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};

const LIMIT: Duration = Duration::from_secs(10);

/// An ADF-like lead: multi-line, non-ASCII, and with lines that need dot-stuffing.
/// Lines stay under 76 characters so lettre accepts it as 8bit.
const ADF: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<?adf version="1.0"?>
<adf>
  <prospect>
    <customer>
      <contact><name part="first">José</name></contact>
    </customer>
    <comments>
.leading dot
..two leading dots
.
    </comments>
  </prospect>
</adf>
"#;

async fn within<T>(fut: impl Future<Output = T>) -> T {
    tokio::time::timeout(LIMIT, fut).await.expect("timed out")
}

fn transport(addr: SocketAddr) -> AsyncSmtpTransport<Tokio1Executor> {
    AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous("127.0.0.1")
        .port(addr.port())
        .timeout(Some(LIMIT))
        .build()
}

fn lead(encoding: ContentTransferEncoding, id: &str) -> Message {
    let from: Mailbox = "Lead Bot <leads@dms-bridge.test>".parse().unwrap();
    Message::builder()
        .from(from)
        .to("crm@dealer.test".parse().unwrap())
        .subject("ADF lead: José")
        .message_id(Some(format!("<{id}@dms-bridge.test>")))
        .header(ContentType::TEXT_PLAIN)
        .body(Body::new_with_encoding(ADF.to_owned(), encoding).unwrap())
        .unwrap()
}

/// A hand-driven SMTP session.
struct Client {
    reader: BufReader<OwnedReadHalf>,
    writer: OwnedWriteHalf,
}

impl Client {
    async fn connect(addr: SocketAddr) -> Self {
        let (read, writer) = within(TcpStream::connect(addr)).await.unwrap().into_split();
        let mut client = Client {
            reader: BufReader::new(read),
            writer,
        };
        let greeting = client.reply().await;
        assert!(greeting.starts_with("220 ") && greeting.contains("ESMTP dms-bridge-mock"));
        client
    }

    async fn send(&mut self, bytes: &[u8]) {
        within(self.writer.write_all(bytes)).await.unwrap();
    }

    /// Reads a whole (possibly multi-line) reply.
    async fn reply(&mut self) -> String {
        let mut reply = String::new();
        loop {
            let mut line = String::new();
            let n = within(self.reader.read_line(&mut line)).await.unwrap();
            assert!(n > 0, "connection closed mid-reply: {reply:?}");
            reply.push_str(&line);
            if line.as_bytes().get(3) != Some(&b'-') {
                return reply;
            }
        }
    }

    async fn cmd(&mut self, line: &str) -> String {
        self.send(format!("{line}\r\n").as_bytes()).await;
        self.reply().await
    }

    async fn assert_closed(&mut self) {
        let mut rest = Vec::new();
        let n = within(self.reader.read_to_end(&mut rest)).await.unwrap();
        assert_eq!(n, 0, "unexpected data after close");
    }
}

fn code(reply: &str) -> &str {
    &reply[..3]
}

#[tokio::test]
async fn lettre_delivery_is_decoded_for_every_transfer_encoding() {
    let smtp = MockSmtp::start(0).await.unwrap();
    let encodings = [
        ContentTransferEncoding::EightBit,
        ContentTransferEncoding::QuotedPrintable,
        ContentTransferEncoding::Base64,
    ];
    for (i, encoding) in encodings.into_iter().enumerate() {
        let id = format!("lead-{i}");
        within(transport(smtp.addr()).send(lead(encoding, &id)))
            .await
            .unwrap();
        let mails = smtp.wait_for(i + 1, LIMIT).await;
        let mail = &mails[i];
        // lettre sends CRLF line endings and the server drops trailing line
        // breaks; otherwise the body is byte-for-byte the document.
        let expected = ADF.replace('\n', "\r\n");
        assert_eq!(mail.body, expected.trim_end(), "{encoding:?}");
        assert_eq!(mail.subject.as_deref(), Some("ADF lead: José"));
        assert_eq!(
            mail.message_id.as_deref(),
            Some(&*format!("{id}@dms-bridge.test"))
        );
        assert_eq!(
            mail.content_type.as_deref(),
            Some("text/plain; charset=utf-8")
        );
        assert_eq!(mail.mail_from, "leads@dms-bridge.test");
        assert_eq!(mail.rcpt_to, ["crm@dealer.test"]);
        assert!(mail.raw.ends_with("\r\n") && !mail.raw.ends_with("\r\n.\r\n"));
    }
    // With 8bit the dot lines travel as-is, so `raw` proves the unstuffing.
    let raw = &smtp.messages()[0].raw;
    assert!(raw.contains("\r\n.leading dot\r\n..two leading dots\r\n.\r\n"));
    assert!(raw.contains("José"));
}

#[tokio::test]
async fn two_messages_on_one_connection() {
    let smtp = MockSmtp::start(0).await.unwrap();
    let mut c = Client::connect(smtp.addr()).await;
    assert!(c.cmd("EHLO client.test").await.starts_with("250-"));
    let mut queue_ids = Vec::new();
    for n in 1..=2 {
        assert_eq!(
            code(
                &c.cmd(&format!("MAIL FROM:<s{n}@x.test> BODY=8BITMIME"))
                    .await
            ),
            "250"
        );
        assert_eq!(code(&c.cmd(&format!("rcpt to:<r{n}@y.test>")).await), "250");
        assert_eq!(code(&c.cmd("RCPT TO: <cc@y.test>").await), "250");
        assert_eq!(code(&c.cmd("DATA").await), "354");
        let data =
            format!("Subject: n{n}\r\nMessage-ID: <m{n}@x>\r\n\r\nbody {n}\r\n..dot\r\n.\r\n");
        c.send(data.as_bytes()).await;
        let reply = c.reply().await;
        assert!(reply.starts_with("250 2.0.0 Ok: queued as "), "{reply}");
        queue_ids.push(reply);
    }
    assert_ne!(queue_ids[0], queue_ids[1]);
    assert_eq!(code(&c.cmd("QUIT").await), "221");
    c.assert_closed().await;

    let mails = smtp.wait_for(2, LIMIT).await;
    assert_eq!(mails.len(), 2);
    for (n, mail) in (1..=2).zip(&mails) {
        assert_eq!(mail.mail_from, format!("s{n}@x.test"));
        assert_eq!(
            mail.rcpt_to,
            [format!("r{n}@y.test"), "cc@y.test".to_owned()]
        );
        assert_eq!(mail.subject.as_deref(), Some(&*format!("n{n}")));
        assert_eq!(mail.message_id.as_deref(), Some(&*format!("m{n}@x")));
        assert_eq!(mail.content_type, None);
        assert_eq!(mail.body, format!("body {n}\r\n.dot"));
        assert_eq!(
            mail.raw,
            format!("Subject: n{n}\r\nMessage-ID: <m{n}@x>\r\n\r\nbody {n}\r\n.dot\r\n")
        );
    }
}

#[tokio::test]
async fn fail_next_gives_a_transient_error_and_keeps_nothing() {
    let smtp = MockSmtp::start(0).await.unwrap();
    smtp.fail_next(1);
    let mailer = transport(smtp.addr());
    let err = within(mailer.send(lead(ContentTransferEncoding::EightBit, "a")))
        .await
        .unwrap_err();
    assert!(err.is_transient(), "{err:?}");
    within(mailer.send(lead(ContentTransferEncoding::EightBit, "b")))
        .await
        .unwrap();
    let mails = smtp.wait_for(1, LIMIT).await;
    assert_eq!(mails.len(), 1);
    assert_eq!(mails[0].message_id.as_deref(), Some("b@dms-bridge.test"));
}

#[tokio::test]
async fn reject_next_gives_a_permanent_error_and_keeps_nothing() {
    let smtp = MockSmtp::start(0).await.unwrap();
    smtp.reject_next(1);
    let mailer = transport(smtp.addr());
    let err = within(mailer.send(lead(ContentTransferEncoding::EightBit, "a")))
        .await
        .unwrap_err();
    assert!(err.is_permanent(), "{err:?}");
    within(mailer.send(lead(ContentTransferEncoding::EightBit, "b")))
        .await
        .unwrap();
    assert_eq!(smtp.wait_for(1, LIMIT).await.len(), 1);
}

#[tokio::test]
async fn injected_replies_over_raw_session() {
    let smtp = MockSmtp::start(0).await.unwrap();
    smtp.fail_next(1);
    smtp.reject_next(1);
    let mut c = Client::connect(smtp.addr()).await;
    for expected in ["451 4.3.0", "550 5.7.1", "250 2.0.0"] {
        assert_eq!(code(&c.cmd("MAIL FROM:<a@x.test>").await), "250");
        assert_eq!(code(&c.cmd("RCPT TO:<b@y.test>").await), "250");
        assert_eq!(code(&c.cmd("DATA").await), "354");
        c.send(b"Subject: s\r\n\r\nhi\r\n.\r\n").await;
        assert!(c.reply().await.starts_with(expected));
    }
    assert_eq!(smtp.wait_for(1, LIMIT).await.len(), 1);
}

#[tokio::test]
async fn command_sequence_errors() {
    let smtp = MockSmtp::start(0).await.unwrap();
    let mut c = Client::connect(smtp.addr()).await;
    let ehlo = c.cmd("ehlo client.test").await;
    assert!(
        ehlo.contains("250-8BITMIME\r\n")
            && ehlo.contains("SMTPUTF8")
            && ehlo.contains("250 SIZE 10485760\r\n")
    );
    assert!(!ehlo.contains("STARTTLS") && !ehlo.contains("AUTH") && !ehlo.contains("PIPELINING"));
    assert_eq!(code(&c.cmd("RCPT TO:<b@y.test>").await), "503");
    assert_eq!(code(&c.cmd("DATA").await), "503");
    assert_eq!(code(&c.cmd("MAIL FROM:<a@x.test>").await), "250");
    assert_eq!(code(&c.cmd("MAIL FROM:<a@x.test>").await), "503");
    assert_eq!(code(&c.cmd("DATA").await), "503");
    assert_eq!(code(&c.cmd("RCPT TO:<>").await), "501");
    assert_eq!(code(&c.cmd("RCPT TO:<b@y.test>").await), "250");
    assert_eq!(code(&c.cmd("RSET").await), "250");
    assert_eq!(code(&c.cmd("DATA").await), "503");
    let with_params = c.cmd("MAIL FROM:<a@x.test> SIZE=1234 BODY=8BITMIME").await;
    assert_eq!(code(&with_params), "250");
    assert_eq!(code(&c.cmd("RSET").await), "250");
    assert_eq!(code(&c.cmd("MAIL TO:<a@x.test>").await), "501");
    assert_eq!(code(&c.cmd("BOGUS").await), "500");
    assert_eq!(code(&c.cmd("").await), "500");
    assert_eq!(code(&c.cmd("STARTTLS").await), "502");
    assert_eq!(code(&c.cmd("AUTH PLAIN AGFAYg==").await), "502");
    assert_eq!(code(&c.cmd("NOOP").await), "250");
    assert_eq!(code(&c.cmd("HELO client.test").await), "250");
    // Bare LF line endings are accepted for commands too.
    c.send(b"QUIT\n").await;
    assert_eq!(code(&c.reply().await), "221");
    c.assert_closed().await;
    assert!(smtp.messages().is_empty());
}

#[tokio::test]
async fn null_sender_and_bare_lf_data() {
    let smtp = MockSmtp::start(0).await.unwrap();
    let mut c = Client::connect(smtp.addr()).await;
    assert_eq!(code(&c.cmd("MAIL FROM:<>").await), "250");
    assert_eq!(code(&c.cmd("RCPT TO:b@y.test").await), "250");
    assert_eq!(code(&c.cmd("DATA").await), "354");
    c.send(b"Subject: lf\n\nline\n..x\n.\n").await;
    assert_eq!(code(&c.reply().await), "250");
    let mail = &smtp.wait_for(1, LIMIT).await[0];
    assert_eq!(mail.mail_from, "");
    assert_eq!(mail.rcpt_to, ["b@y.test"]);
    assert_eq!(mail.raw, "Subject: lf\n\nline\n.x\n");
    assert_eq!(mail.body, "line\n.x");
}

#[tokio::test]
async fn transfer_encodings_and_charsets_are_undone() {
    let smtp = MockSmtp::start(0).await.unwrap();
    let mut c = Client::connect(smtp.addr()).await;
    let messages: [&[u8]; 2] = [
        // A bare ADF document, as some CRMs want it: not text/*, base64.
        b"Content-Type: application/xml\r\nContent-Transfer-Encoding: base64\r\n\r\nPGFkZi8+\r\n",
        // Latin-1 quoted-printable with a soft line break.
        b"Content-Type: text/plain;\r\n charset=iso-8859-1\r\n\
          Content-Transfer-Encoding: quoted-printable\r\n\r\nJos=E9 Gar=\r\nc=EDa\r\n",
    ];
    for message in messages {
        assert_eq!(code(&c.cmd("MAIL FROM:<a@x.test>").await), "250");
        assert_eq!(code(&c.cmd("RCPT TO:<b@y.test>").await), "250");
        assert_eq!(code(&c.cmd("DATA").await), "354");
        c.send(message).await;
        c.send(b".\r\n").await;
        assert_eq!(code(&c.reply().await), "250");
    }
    let mails = smtp.wait_for(2, LIMIT).await;
    assert_eq!(mails[0].content_type.as_deref(), Some("application/xml"));
    assert_eq!(mails[0].body, "<adf/>");
    // Folded header comes back unfolded.
    let latin1 = "text/plain; charset=iso-8859-1";
    assert_eq!(mails[1].content_type.as_deref(), Some(latin1));
    assert_eq!(mails[1].body, "José García");
}

#[tokio::test]
async fn oversize_line_and_message_are_refused_and_session_survives() {
    let smtp = MockSmtp::start(0).await.unwrap();
    let mut c = Client::connect(smtp.addr()).await;
    let long = format!("NOOP {}\r\n", "x".repeat(200 * 1024));
    c.send(long.as_bytes()).await;
    assert_eq!(code(&c.reply().await), "500");
    assert_eq!(code(&c.cmd("NOOP").await), "250");

    // An overlong line inside DATA spoils the message, not the session.
    assert_eq!(code(&c.cmd("MAIL FROM:<a@x.test>").await), "250");
    assert_eq!(code(&c.cmd("RCPT TO:<b@y.test>").await), "250");
    assert_eq!(code(&c.cmd("DATA").await), "354");
    c.send(format!("Subject: big\r\n\r\n{}\r\n.\r\n", "y".repeat(100 * 1024)).as_bytes())
        .await;
    assert_eq!(code(&c.reply().await), "552");

    // So does a message over 10 MiB made of ordinary lines.
    assert_eq!(code(&c.cmd("MAIL FROM:<a@x.test>").await), "250");
    assert_eq!(code(&c.cmd("RCPT TO:<b@y.test>").await), "250");
    assert_eq!(code(&c.cmd("DATA").await), "354");
    let line = format!("{}\r\n", "z".repeat(998));
    let chunk = line.repeat(1024); // ~1 MiB
    for _ in 0..11 {
        c.send(chunk.as_bytes()).await;
    }
    c.send(b".\r\n").await;
    assert_eq!(code(&c.reply().await), "552");

    assert_eq!(code(&c.cmd("NOOP").await), "250");
    assert_eq!(code(&c.cmd("QUIT").await), "221");
    assert!(smtp.messages().is_empty());
}

#[tokio::test]
async fn shutdown_stops_accepting() {
    let smtp = MockSmtp::start(0).await.unwrap();
    let addr = smtp.addr();
    Client::connect(addr).await;
    smtp.shutdown();
    within(async {
        while TcpStream::connect(addr).await.is_ok() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
}

#[tokio::test]
async fn wait_for_returns_what_there_is_at_timeout() {
    let smtp = MockSmtp::start(0).await.unwrap();
    let mails = within(smtp.wait_for(1, Duration::from_millis(50))).await;
    assert!(mails.is_empty());
}
