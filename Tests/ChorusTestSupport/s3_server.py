"""A throwaway S3-compatible server for the tests: moto's server mode on 127.0.0.1, a free port.

With --auth, moto checks every request's SigV4 signature against an IAM access key made here (so the tests'
signer meets an independent verifier); without, it accepts any request (moto cannot verify presigned URLs while
checking signatures). Prints one JSON line {"port", "key", "secret"}, then serves until its standard input
closes (the test process ended).
"""

import os

# The test process spawns helpers and tools from many threads at once, and each child inherits the pipes open at that
# moment, another child's among them: held here for this helper's life, the write end of a tool's output pipe would
# keep the test reading it from ever seeing its end (a hang seen in CI). Only standard input, output and error stay.
os.closerange(3, os.sysconf("SC_OPEN_MAX"))
import faulthandler
import json
import sys

# A start that hangs (moto's server thread failing, say) prints where it was and ends, instead of never announcing.
faulthandler.dump_traceback_later(100, exit=True)

if "--auth" in sys.argv:
    os.environ["INITIAL_NO_AUTH_ACTION_COUNT"] = "3"  # the three IAM calls below

import boto3  # noqa: E402
from botocore.config import Config  # noqa: E402
from moto.server import ThreadedMotoServer  # noqa: E402

server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
server.start()
port = server.get_host_and_port()[1]
key, secret = "chorus-test-key", "chorus-test-secret-0f9e8d7c"
if "--auth" in sys.argv:
    iam = boto3.client("iam", endpoint_url=f"http://127.0.0.1:{port}", region_name="us-east-1",
                       aws_access_key_id="bootstrap", aws_secret_access_key="bootstrap",
                       config=Config(connect_timeout=5, read_timeout=30, retries={"max_attempts": 2}))
    iam.create_user(UserName="chorus")
    policy = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}
    iam.put_user_policy(UserName="chorus", PolicyName="everything", PolicyDocument=json.dumps(policy))
    created = iam.create_access_key(UserName="chorus")["AccessKey"]
    key, secret = created["AccessKeyId"], created["SecretAccessKey"]
faulthandler.cancel_dump_traceback_later()
print(json.dumps({"port": port, "key": key, "secret": secret}), flush=True)
sys.stdin.read()
server.stop()
