#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A local stand-in for a fleet backend, for jitrace's push tests.

It takes the two requests jitrace sends, as the backends document them:
  Grafana Pyroscope  POST /ingest?name=APP{k=v,...}&from=S&until=S&format=pprof[&...]
                     the profile as the multipart form file "profile" (or as the raw body)
  Parca              POST /profiles/writeraw (its WriteRaw through the HTTP gateway), JSON:
                     {"series":[{"labels":{"labels":[{"name":..,"value":..}]},
                                 "samples":[{"rawProfile": BASE64}]}], "normalized": ..}
Each profile received is written to DIR/N.pb.gz and told in DIR/received, one line:
  profile api=ingest|writeraw file=PATH pid=.. comm=.. service=.. host=.. from=.. until=..
          auth=.. org=..
values percent-encoded. A request that breaks the documented form gets 400 and a line
"bad WHY" instead. The port it listens on is written to DIR/port once it listens.

Usage: receiver.py DIR [--port N]
"""
import base64
import email.parser
import email.policy
import json
import os
import signal
import sys
import urllib.parse
from http.server import BaseHTTPRequestHandler, HTTPServer


class Receiver(BaseHTTPRequestHandler):
    out_dir = "."
    count = 0

    def log_message(self, fmt, *args):  # quiet: the tests read DIR/received
        pass

    def body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            data = b""
            while True:
                size = int(self.rfile.readline().strip(), 16)
                if size == 0:
                    self.rfile.readline()
                    return data
                data += self.rfile.read(size)
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length", "0")))

    def note(self, line):
        with open(os.path.join(self.out_dir, "received"), "a") as f:
            f.write(line + "\n")

    def reply(self, code, text):
        data = text.encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def bad(self, why):
        self.note("bad " + urllib.parse.quote(why, safe=""))
        self.reply(400, json.dumps({"error": why}))

    def save(self, api, profile, labels, extra):
        Receiver.count += 1
        path = os.path.join(self.out_dir, "%d.pb.gz" % Receiver.count)
        with open(path, "wb") as f:
            f.write(profile)
        fields = {"api": api, "file": path}
        fields.update(labels)
        fields.update(extra)
        fields["auth"] = self.headers.get("Authorization", "")
        fields["org"] = self.headers.get("X-Scope-OrgID", "")
        self.note("profile " + " ".join(
            "%s=%s" % (k, urllib.parse.quote(str(v), safe="")) for k, v in fields.items()))
        self.reply(200, "{}")

    def ingest(self, query, body):
        q = urllib.parse.parse_qs(query, keep_blank_values=True)
        for key in ("name", "from", "until"):
            if len(q.get(key, [])) != 1:
                return self.bad("query parameter %s missing or repeated" % key)
        if q.get("format", ["folded"])[0] != "pprof":
            return self.bad("format is not pprof")
        try:
            start, until = int(q["from"][0]), int(q["until"][0])
        except ValueError:
            return self.bad("from or until is not a Unix time")
        if start > until:
            return self.bad("from is after until")
        name = q["name"][0]
        app, brace, rest = name.partition("{")
        if not app or not brace or not rest.endswith("}"):
            return self.bad("name is not APP{labels}")
        labels = {}
        for pair in rest[:-1].split(","):
            k, eq, v = pair.partition("=")
            if not eq or not k:
                return self.bad("label %r is not k=v" % pair)
            labels[k] = v
        labels["service"] = labels.pop("service_name", "")
        ctype = self.headers.get("Content-Type", "")
        if ctype.startswith("multipart/form-data"):
            msg = email.parser.BytesParser(policy=email.policy.default).parsebytes(
                b"Content-Type: " + ctype.encode() + b"\r\n\r\n" + body)
            profile = None
            for part in msg.iter_parts():
                if part.get_param("name", header="content-disposition") == "profile":
                    profile = part.get_payload(decode=True)
            if profile is None:
                return self.bad("no form file named profile")
        else:
            profile = body
        self.save("ingest", profile, labels, {
            "app": app, "from": start, "until": until,
            "sampleRate": q.get("sampleRate", [""])[0],
            "spyName": q.get("spyName", [""])[0],
            "multipart": int(ctype.startswith("multipart/form-data"))})

    def writeraw(self, body):
        if not self.headers.get("Content-Type", "").startswith("application/json"):
            return self.bad("Content-Type is not application/json")
        try:
            req = json.loads(body)
            series = req["series"]
        except (ValueError, KeyError, TypeError):
            return self.bad("body is not WriteRawRequest JSON")
        for s in series:
            labels = {l["name"]: l["value"] for l in s["labels"]["labels"]}
            if "__name__" not in labels:
                return self.bad("series without __name__")
            labels["service"] = labels.pop("service_name", "")
            for sample in s["samples"]:
                raw = sample.get("rawProfile", sample.get("raw_profile"))
                try:
                    profile = base64.b64decode(raw, validate=True)
                except (ValueError, TypeError):
                    return self.bad("rawProfile is not base64")
                self.save("writeraw", profile, labels,
                          {"normalized": int(bool(req.get("normalized")))})

    def do_POST(self):
        url = urllib.parse.urlsplit(self.path)
        body = self.body()
        if url.path == "/ingest":
            self.ingest(url.query, body)
        elif url.path == "/profiles/writeraw":
            self.writeraw(body)
        else:
            self.bad("no endpoint " + url.path)


def main():
    args = sys.argv[1:]
    port = 0
    if len(args) == 3 and args[1] == "--port":
        port = int(args[2])
    elif len(args) != 1:
        sys.exit(__doc__)
    Receiver.out_dir = args[0]
    Receiver.count = sum(1 for n in os.listdir(args[0]) if n.endswith(".pb.gz"))
    HTTPServer.allow_reuse_address = True
    server = HTTPServer(("127.0.0.1", port), Receiver)
    server.timeout = 0.05
    # SIGTERM stops it between requests, never in one: a request it took is answered
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(1))
    tmp = os.path.join(args[0], "port.tmp")
    with open(tmp, "w") as f:
        f.write("%d\n" % server.server_address[1])
    os.rename(tmp, os.path.join(args[0], "port"))
    while not stopping:
        server.handle_request()
    server.server_close()


if __name__ == "__main__":
    main()
