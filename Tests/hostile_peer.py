#!/usr/bin/env python3
"""A hostile peer for the security tests: completes TLS 1.3 with a certificate of its own
(anyone can), then sends what a stranger would. Standard library only.

  hostile_peer.py CERT KEY HOST PORT send HEX      bytes after TLS; prints what came back
  hostile_peer.py CERT KEY HOST PORT flood N SIZE   N connections at once, each announcing a
                                                    frame of SIZE bytes and sending it
Output: one JSON object on stdout.
"""
import json, socket, ssl, struct, sys, threading, time

cert, key, host, port, mode = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]

def context():
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    ctx.minimum_version = ssl.TLSVersion.TLSv1_3
    ctx.load_cert_chain(cert, key)
    return ctx

def connect(timeout=15):
    raw = socket.create_connection((host, port), timeout=timeout)
    return context().wrap_socket(raw)

def read_frames(s, limit=8):
    """The frames the agent sent back before closing: [(type, code or None, text)]."""
    data = b""
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    except (OSError, ssl.SSLError):
        pass
    frames = []
    while len(data) >= 5 and len(frames) < limit:
        (length,) = struct.unpack(">I", data[:4])
        body = data[4:4 + length]
        if len(body) < length:
            break
        data = data[4 + length:]
        if body[0] == 8 and len(body) >= 3:
            (code,) = struct.unpack(">H", body[1:3])
            frames.append({"type": 8, "code": code, "reason": body[4:].decode("utf-8", "replace")})
        else:
            frames.append({"type": body[0]})
    return frames

if mode == "send":
    payload = bytes.fromhex(sys.argv[6])
    try:
        s = connect()
        s.sendall(payload)
        frames = read_frames(s)
        print(json.dumps({"connected": True, "frames": frames}))
    except Exception as e:  # refused at TLS, reset…
        print(json.dumps({"connected": False, "error": str(e), "frames": []}))

elif mode == "flood":
    n, size = int(sys.argv[6]), int(sys.argv[7])
    results = {"tls": 0, "refused": 0, "error_frames": {}, "sent_bytes": 0}
    lock = threading.Lock()
    def one():
        try:
            s = connect()
        except Exception:
            with lock: results["refused"] += 1
            return
        with lock: results["tls"] += 1
        sent = 0
        try:
            s.sendall(struct.pack(">I", size) + b"\x03")
            chunk = b"\x00" * 65536
            while sent < size:
                s.sendall(chunk)
                sent += len(chunk)
        except Exception:
            pass
        frames = read_frames(s)
        with lock:
            results["sent_bytes"] += sent
            for f in frames:
                if f["type"] == 8:
                    key = str(f["code"])
                    results["error_frames"][key] = results["error_frames"].get(key, 0) + 1
    threads = [threading.Thread(target=one) for _ in range(n)]
    started = time.time()
    for t in threads: t.start()
    for t in threads: t.join()
    results["seconds"] = round(time.time() - started, 2)
    print(json.dumps(results))
