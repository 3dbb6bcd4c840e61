//! A bare TCP relay: accepts connections on loopback and copies each one's bytes to and
//! from a new connection to `--to`, looking at nothing and recording nothing.
//!
//! It is the `reel rec --url` bench's ceiling: the least any HTTP proxy process has to
//! do (accept, connect, and one read and one write per chunk in each direction, one
//! extra process in the path), on the runtime reel's proxy uses (tokio, one worker per
//! core, at most 4). What reel spends beyond it is parsing HTTP and recording.
//!
//!     tcp_relay --to HOST:PORT
//!
//! Prints `listening on 127.0.0.1:PORT` on stdout once it accepts connections, then
//! relays until killed.

use std::io::Write as _;

use tokio::net::{TcpListener, TcpStream};

fn main() -> std::io::Result<()> {
    let mut args = std::env::args().skip(1);
    let to = match (args.next().as_deref(), args.next()) {
        (Some("--to"), Some(to)) => to,
        _ => {
            eprintln!("tcp_relay: usage: tcp_relay --to HOST:PORT");
            std::process::exit(64);
        }
    };
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get().min(4));
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()?;
    rt.block_on(async move {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        println!("listening on {}", listener.local_addr()?);
        std::io::stdout().flush()?;
        loop {
            let (mut client, _) = listener.accept().await?;
            let to = to.clone();
            tokio::spawn(async move {
                let Ok(mut upstream) = TcpStream::connect(&to).await else {
                    return;
                };
                let _ = client.set_nodelay(true);
                let _ = upstream.set_nodelay(true);
                let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
            });
        }
    })
}
