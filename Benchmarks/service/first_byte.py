#!/usr/bin/env python3
"""POSTs JSON to a URL and prints seconds to the response headers and to the first body byte, and the total.
usage: first_byte.py URL JSON [KEY]"""
import http.client, sys, time, urllib.parse

url, body = urllib.parse.urlparse(sys.argv[1]), sys.argv[2].encode()
headers = {"Content-Type": "application/json"}
if len(sys.argv) > 3:
    headers["Authorization"] = "Bearer " + sys.argv[3]
started = time.monotonic()
connection = http.client.HTTPConnection(url.hostname, url.port, timeout=300)
connection.request("POST", url.path + ("?" + url.query if url.query else ""), body, headers)
response = connection.getresponse()
head = time.monotonic() - started
first = response.read(1)
first_byte = time.monotonic() - started
rest = response.read()
total = time.monotonic() - started
print(f"status={response.status} headers={head:.3f} first_byte={first_byte:.3f} total={total:.3f} bytes={len(first) + len(rest)}")
