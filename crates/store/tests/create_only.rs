//! Two writers race to create the same key on S3: exactly one wins, the other is told the key
//! exists, and the object is the winner's bytes, whole, for a single PUT and a 20 MiB multipart
//! upload alike.
//!
//! s3s-fs honours `If-None-Match: *` on PutObject and CompleteMultipartUpload, but checks then
//! writes without a lock, so two requests landing together could both pass its check (S3
//! itself decides atomically). The writers therefore talk to it through a proxy that forwards
//! one request at a time, which makes the server atomic as S3 is; what is left to test is the
//! client: that each create-only write is conditional on the server, not checked beforehand.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use caption_store::{
    Error, GetOptions, LinkOptions, ObjectKey, PutOptions, S3Settings, S3Storage, Storage,
};
use support::{ACCESS_KEY, BUCKET, REGION, S3sServer, SECRET_KEY, collect, stream_of, test_bytes};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};

/// A proxy on loopback in front of `upstream` (a port) that forwards one request at a time
/// (each on its own connection, closed after the answer), and answers the first
/// `refused_parts` part uploads itself with 503 as a bucket in trouble does. Returns its port.
async fn one_at_a_time(upstream: u16, refused_parts: Arc<AtomicUsize>) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let turn = Arc::new(tokio::sync::Mutex::new(()));
    tokio::spawn(async move {
        loop {
            let (client, _) = listener.accept().await.unwrap();
            let turn = Arc::clone(&turn);
            let refused_parts = Arc::clone(&refused_parts);
            tokio::spawn(async move { forward(client, upstream, &turn, &refused_parts).await });
        }
    });
    port
}

async fn forward(
    mut client: TcpStream,
    upstream: u16,
    turn: &tokio::sync::Mutex<()>,
    refused_parts: &AtomicUsize,
) {
    let mut request = Vec::new();
    let mut chunk = vec![0_u8; 1 << 16];
    let head_len = loop {
        if let Some(at) = request.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        let read = client.read(&mut chunk).await.unwrap();
        if read == 0 {
            return; // an idle connection closed by the client
        }
        request.extend_from_slice(&chunk[..read]);
    };
    let head = String::from_utf8_lossy(&request[..head_len]).to_ascii_lowercase();
    assert!(
        !head.contains("transfer-encoding"),
        "a chunked body: {head}"
    );
    let body_len: usize = head
        .lines()
        .find_map(|line| line.strip_prefix("content-length:"))
        .map_or(0, |v| v.trim().parse().unwrap());
    while request.len() < head_len + body_len {
        let read = client.read(&mut chunk).await.unwrap();
        assert!(read > 0, "the client closed mid-request");
        request.extend_from_slice(&chunk[..read]);
    }
    let is_part = head.starts_with("put ") && head.contains("partnumber=");
    if is_part
        && refused_parts
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok()
    {
        let refusal =
            "HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\nconnection: close\r\n\r\n";
        let _ = client.write_all(refusal.as_bytes()).await;
        return;
    }
    // The server closes the connection after answering, so the answer ends where its bytes do;
    // the header is not signed, so the signature still holds.
    request.splice(head_len - 2..head_len - 2, *b"connection: close\r\n");
    let answer = {
        let _turn = turn.lock().await;
        let mut server = TcpStream::connect(("127.0.0.1", upstream)).await.unwrap();
        server.write_all(&request).await.unwrap();
        let mut answer = Vec::new();
        server.read_to_end(&mut answer).await.unwrap();
        answer
    };
    let _ = client.write_all(&answer).await;
}

async fn race(storage: &S3Storage, len: usize) -> (usize, Vec<u8>) {
    let key = ObjectKey::new_upload("race.mp4");
    let bodies = [test_bytes(len, 1), test_bytes(len, 2)];
    assert_ne!(bodies[0], bodies[1]);
    let (first, second) = tokio::join!(
        storage.put(
            &key,
            stream_of(&bodies[0], 64 * 1024),
            PutOptions::default()
        ),
        storage.put(
            &key,
            stream_of(&bodies[1], 64 * 1024),
            PutOptions::default()
        ),
    );
    let winner = match (&first, &second) {
        (Ok(_), Err(Error::AlreadyExists { .. })) => 0,
        (Err(Error::AlreadyExists { .. }), Ok(_)) => 1,
        other => panic!("{len} bytes: exactly one writer should win: {other:?}"),
    };
    let info = storage.head(&key).await.unwrap();
    assert_eq!(info.size_bytes, len as u64);
    let stored = collect(storage.get(&key, GetOptions::default()).await.unwrap().body).await;
    assert!(
        stored == bodies[winner],
        "{len} bytes: the object is not the winner's whole"
    );
    (winner, stored)
}

/// S3 storage reaching `server` through [`one_at_a_time`].
async fn behind_proxy(server: &S3sServer, refused_parts: Arc<AtomicUsize>) -> S3Storage {
    let upstream: u16 = server.endpoint.rsplit(':').next().unwrap().parse().unwrap();
    let proxy = one_at_a_time(upstream, refused_parts).await;
    let settings = S3Settings::new(
        format!("http://127.0.0.1:{proxy}"),
        BUCKET,
        REGION,
        ACCESS_KEY,
        SECRET_KEY,
    )
    .allow_http(true);
    S3Storage::open(&settings, LinkOptions::default()).unwrap()
}

#[tokio::test]
async fn concurrent_create_only_writers_of_one_key_one_wins() {
    let server = S3sServer::start();
    let storage = behind_proxy(&server, Arc::default()).await;

    // One PUT each (1 MiB), then a multipart upload each (20 MiB: parts of 8, 8 and 4 MiB).
    for len in [1024 * 1024, 20 * 1024 * 1024] {
        race(&storage, len).await;
    }

    // The loser's parts were thrown away: s3s-fs keeps no upload's part behind.
    let root = server.object_file("x");
    let root = root.parent().unwrap().parent().unwrap();
    let leftovers: Vec<String> = std::fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with(".upload_id-"))
        .collect();
    assert!(leftovers.is_empty(), "parts left behind: {leftovers:?}");
}

#[tokio::test]
async fn a_large_create_only_write_over_an_object_is_refused_by_the_server() {
    let server = S3sServer::start();
    let storage = server.storage(LinkOptions::default());
    let key = ObjectKey::new_upload("taken.mp4");
    let first = test_bytes(20 * 1024 * 1024, 3);
    storage
        .put(&key, stream_of(&first, 1 << 20), PutOptions::default())
        .await
        .unwrap();
    let again = storage
        .put(
            &key,
            stream_of(&test_bytes(20 * 1024 * 1024, 4), 1 << 20),
            PutOptions::default(),
        )
        .await;
    assert!(
        matches!(again, Err(Error::AlreadyExists { .. })),
        "{again:?}"
    );
    let stored = collect(storage.get(&key, GetOptions::default()).await.unwrap().body).await;
    assert!(stored == first, "the first object changed");
}

#[tokio::test]
async fn a_part_refused_for_now_is_sent_again() {
    let server = S3sServer::start();
    let refused_parts = Arc::new(AtomicUsize::new(2));
    let storage = behind_proxy(&server, Arc::clone(&refused_parts)).await;
    let key = ObjectKey::new_upload("retried.mp4");
    let bytes = test_bytes(20 * 1024 * 1024, 5);
    storage
        .put(&key, stream_of(&bytes, 1 << 20), PutOptions::default())
        .await
        .unwrap();
    assert_eq!(
        refused_parts.load(Ordering::SeqCst),
        0,
        "no part was refused"
    );
    let stored = collect(storage.get(&key, GetOptions::default()).await.unwrap().body).await;
    assert!(stored == bytes, "the object is not the bytes written");
}
