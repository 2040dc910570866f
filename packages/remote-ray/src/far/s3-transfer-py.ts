/**
 * The far side of an S3 step on a Ray node without the runner's filesystem: a Python script
 * (standard library only; Ray nodes always have Python) shipped in the job's working_dir package.
 * It reads dependencies from the bucket, uploads the output to the attempt's own prefix and prints
 * the program's result as one marked line on the job's log (see command-staged.ts).
 */

/** The name of the script in the package. */
export const S3_TRANSFER_FILE = 'cairn_s3_transfer.py';

/** The line prefix the script puts before the base64 of the program's result file. */
export const RESULT_MARK = 'cairn-ray-result ';

/** The script. */
export const S3_TRANSFER_PY = String.raw`"""Cairn's object-store transfers on a Ray node without the runner's filesystem (standard library only).

Shipped in the job's working_dir package by @cairn/remote-ray; Ray nodes always have Python. Signs
requests with AWS Signature V4 from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (/ AWS_SESSION_TOKEN);
where the store is: CAIRN_S3_ENDPOINT (scheme://host[:port]), CAIRN_S3_REGION, CAIRN_S3_PATH_STYLE=1.

  fetch BUCKET DIR LOCAL   a committed step output (DIR/.artifact.json names its @run/ prefix) into LOCAL
  put LOCAL BUCKET PREFIX  every file under LOCAL to PREFIX<relative path>
  report FILE              prints FILE (the program's result) as one marked line on stdout (the job's log)
"""
import base64, datetime, hashlib, hmac, http.client, json, os, sys, urllib.parse
import xml.etree.ElementTree as ET

MARK = "cairn-ray-result "


def _env(name):
    v = os.environ.get(name)
    if not v:
        sys.exit("cairn: %s is not set on this Ray node: give the Ray nodes credentials for the store (AWS_* in their environment), or the executor storeCredentials: 'runtime-env' on a trusted cluster" % name)
    return v


def _quote(s, safe="/"):
    return urllib.parse.quote(s, safe=safe + "-_.~")


class S3:
    def __init__(self):
        u = urllib.parse.urlsplit(os.environ.get("CAIRN_S3_ENDPOINT") or "https://s3.amazonaws.com")
        self.https = u.scheme == "https"
        self.netloc = u.netloc
        self.region = os.environ.get("CAIRN_S3_REGION") or "us-east-1"
        self.path_style = os.environ.get("CAIRN_S3_PATH_STYLE") == "1"
        self.key = _env("AWS_ACCESS_KEY_ID")
        self.secret = _env("AWS_SECRET_ACCESS_KEY")
        self.token = os.environ.get("AWS_SESSION_TOKEN")

    def request(self, method, bucket, key, query=None, body=None, size=0, sha=None):
        host = self.netloc if self.path_style else "%s.%s" % (bucket, self.netloc)
        path = "/" + (bucket + "/" if self.path_style else "") + key
        query = query or {}
        qs = "&".join("%s=%s" % (_quote(k, ""), _quote(v, "")) for k, v in sorted(query.items()))
        now = datetime.datetime.now(datetime.timezone.utc)
        stamp, day = now.strftime("%Y%m%dT%H%M%SZ"), now.strftime("%Y%m%d")
        headers = {"host": host, "x-amz-date": stamp, "x-amz-content-sha256": sha or hashlib.sha256(b"").hexdigest()}
        if self.token:
            headers["x-amz-security-token"] = self.token
        if body is not None:
            headers["content-length"] = str(size)
        names = sorted(headers)
        canonical = "\n".join([method, _quote(path), qs, "".join("%s:%s\n" % (n, headers[n]) for n in names), ";".join(names), headers["x-amz-content-sha256"]])
        scope = "%s/%s/s3/aws4_request" % (day, self.region)
        to_sign = "\n".join(["AWS4-HMAC-SHA256", stamp, scope, hashlib.sha256(canonical.encode()).hexdigest()])
        k = ("AWS4" + self.secret).encode()
        for part in (day, self.region, "s3", "aws4_request"):
            k = hmac.new(k, part.encode(), hashlib.sha256).digest()
        sig = hmac.new(k, to_sign.encode(), hashlib.sha256).hexdigest()
        headers["authorization"] = "AWS4-HMAC-SHA256 Credential=%s/%s, SignedHeaders=%s, Signature=%s" % (self.key, scope, ";".join(names), sig)
        conn = (http.client.HTTPSConnection if self.https else http.client.HTTPConnection)(host, timeout=300)
        conn.request(method, _quote(path) + ("?" + qs if qs else ""), body=body, headers=headers)
        res = conn.getresponse()
        return res, conn

    def get(self, bucket, key, query=None, to=None):
        res, conn = self.request("GET", bucket, key, query)
        try:
            if res.status == 404:
                return None
            if res.status != 200:
                sys.exit("cairn: GET s3://%s/%s: HTTP %d %s" % (bucket, key, res.status, res.read()[:300].decode("utf-8", "replace")))
            if to is None:
                return res.read()
            with open(to, "wb") as f:
                while True:
                    chunk = res.read(1 << 20)
                    if not chunk:
                        return True
                    f.write(chunk)
        finally:
            conn.close()

    def put(self, bucket, key, path):
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
        with open(path, "rb") as f:
            res, conn = self.request("PUT", bucket, key, body=f, size=os.path.getsize(path), sha=h.hexdigest())
            text = res.read()
            conn.close()
        if res.status != 200:
            sys.exit("cairn: PUT s3://%s/%s: HTTP %d %s" % (bucket, key, res.status, text[:300].decode("utf-8", "replace")))

    def keys(self, bucket, prefix):
        ns = "{http://s3.amazonaws.com/doc/2006-03-01/}"
        token = None
        while True:
            q = {"list-type": "2", "prefix": prefix}
            if token:
                q["continuation-token"] = token
            root = ET.fromstring(self.get(bucket, "", q) or b"<x/>")
            for c in root.iter(ns + "Contents"):
                yield c.find(ns + "Key").text
            token = root.findtext(ns + "NextContinuationToken")
            if root.findtext(ns + "IsTruncated") != "true" or not token:
                return


def fetch(bucket, d, local):
    """The committed objects of the step at s3://bucket/d (its record names the prefix)."""
    d = d.rstrip("/") + "/"
    record = S3().get(bucket, d + ".artifact.json")
    if record is None:
        sys.exit("cairn: s3://%s/%s has no record: the dependency is not committed" % (bucket, d))
    objects = json.loads(record).get("objects")
    s3 = S3()
    base = d + objects if isinstance(objects, str) else d
    os.makedirs(local, exist_ok=True)
    for key in s3.keys(bucket, base):
        rel = key[len(base):]
        # The layout before attempt prefixes: metadata and attempts' objects are not outputs.
        if objects is None and (rel.startswith(".") or rel.startswith("@")):
            continue
        parts = rel.split("/")
        if rel == "" or rel.endswith("/") or any(p in ("", ".", "..") for p in parts) or parts[0] == ".cairn":
            continue
        to = os.path.join(local, *parts)
        os.makedirs(os.path.dirname(to), exist_ok=True)
        s3.get(bucket, key, to=to)


def put(local, bucket, prefix):
    s3 = S3()
    for top, _dirs, files in os.walk(local):
        for name in files:
            path = os.path.join(top, name)
            rel = os.path.relpath(path, local).replace(os.sep, "/")
            s3.put(bucket, prefix + rel, path)


def report(path):
    if os.path.isfile(path):
        with open(path, "rb") as f:
            print(MARK + base64.b64encode(f.read()).decode(), flush=True)


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    {"fetch": fetch, "put": put, "report": report}[cmd](*args)
`;
