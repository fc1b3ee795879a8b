"""An S3-compatible bucket (AWS, SeaweedFS, MinIO, Ceph...) read with boto3.

The location is `s3://bucket/prefix` (AWS) or `http(s)://endpoint/bucket/prefix` (any other
server, path-style). The change marker is the object's ETag, which the listing gives, so an
unchanged object is never downloaded. Credentials: `access_key`, `secret_key`, `region`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import urlsplit

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError, EndpointConnectionError

from apps.sources.kinds.base import (
    ItemError,
    Known,
    Limits,
    Listed,
    SourceError,
    key_safe,
    supported,
)

DENIED = {"AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch", "Forbidden", "403"}


def _split(location: str) -> tuple[str | None, str, str]:
    parts = urlsplit(location)
    if parts.scheme == "s3":
        return None, parts.netloc, parts.path.strip("/")
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise SourceError(
            "An S3 location is s3://bucket/prefix or http(s)://endpoint/bucket/prefix."
        )
    bucket, _, prefix = parts.path.strip("/").partition("/")
    if not bucket:
        raise SourceError("The S3 location names no bucket.")
    return f"{parts.scheme}://{parts.netloc}", bucket, prefix


def _error(exc: Exception, *, bucket: str) -> SourceError:
    if isinstance(exc, EndpointConnectionError):
        return SourceError(f"The S3 server cannot be reached: {exc}")
    if isinstance(exc, ClientError):
        code = str(exc.response.get("Error", {}).get("Code", ""))
        if code in DENIED:
            return SourceError("The S3 server refused the credentials (access denied).")
        if code == "NoSuchBucket":
            return SourceError(f"The bucket {bucket!r} does not exist.")
        return SourceError(f"The S3 server answered {code or 'an error'}: {exc}")
    return SourceError(f"The S3 server could not be read: {exc}")


class S3Connector:
    def __init__(self, *, location: str, credentials: Mapping[str, str], limits: Limits) -> None:
        endpoint, self.bucket, prefix = _split(location)
        self.prefix = f"{prefix}/" if prefix else ""
        self.limits = limits
        timeout = limits.timeout_s
        self.client: Any = boto3.client(
            "s3",
            endpoint_url=endpoint,
            aws_access_key_id=credentials.get("access_key") or None,
            aws_secret_access_key=credentials.get("secret_key") or None,
            region_name=credentials.get("region") or "us-east-1",
            config=Config(
                connect_timeout=timeout,
                read_timeout=timeout,
                retries={"max_attempts": 2},
                s3={"addressing_style": "path"},
            ),
        )
        self.endpoint = endpoint or "s3:/"

    def items(self, *, known: Mapping[str, Known]) -> Iterator[Listed]:
        paginator = self.client.get_paginator("list_objects_v2")
        try:
            for page in paginator.paginate(Bucket=self.bucket, Prefix=self.prefix):
                for entry in page.get("Contents", ()):
                    key = str(entry["Key"])[len(self.prefix) :]
                    if supported(key):
                        yield Listed(
                            key=key,
                            marker=f"{entry['ETag']}:{entry['Size']}",
                            location=f"s3://{self.bucket}/{self.prefix}{key}",
                            size=int(entry["Size"]),
                        )
        except (BotoCoreError, ClientError) as exc:
            raise _error(exc, bucket=self.bucket) from exc

    def fetch(self, item: Listed) -> bytes:
        key_safe(item.key)
        if item.size is not None and item.size > self.limits.max_file_bytes:
            raise ItemError(
                f"The object is {item.size:,} bytes; the limit is {self.limits.max_file_bytes:,} bytes."
            )
        try:
            body = self.client.get_object(Bucket=self.bucket, Key=self.prefix + item.key)["Body"]
            data = body.read(self.limits.max_file_bytes + 1)
        except (BotoCoreError, ClientError) as exc:
            raise ItemError(str(_error(exc, bucket=self.bucket))) from exc
        if len(data) > self.limits.max_file_bytes:
            raise ItemError(
                f"The object is over the limit of {self.limits.max_file_bytes:,} bytes."
            )
        return bytes(data)
