"""The two query endpoints of the Prometheus HTTP API, through ``urllib``, answers gzipped."""

from __future__ import annotations

import gzip
import json
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

Labels = Mapping[str, str]
# unreachable: nothing answers; refused: Prometheus answered with an error; slow: no answer in time.
ErrorKind = Literal["unreachable", "refused", "slow"]


class PrometheusError(Exception):
    """Prometheus could not answer; ``kind`` tells a dead link from a refused query and from a slow one."""

    def __init__(self, message: str, kind: ErrorKind) -> None:
        super().__init__(message)
        self.kind: ErrorKind = kind


@dataclass(frozen=True, slots=True)
class Traffic:
    """What the client has asked so far: requests and bytes received (compressed, as on the wire)."""

    requests: int = 0
    bytes_received: int = 0


@dataclass(frozen=True, slots=True)
class Sample:
    """One series of an instant query."""

    labels: Labels
    timestamp: float
    value: float


@dataclass(frozen=True, slots=True)
class RangeSeries:
    """One series of a range query."""

    labels: Labels
    points: tuple[tuple[float, float], ...]


Opener = Callable[..., Any]


class PrometheusClient:
    """The two query endpoints of the Prometheus HTTP API."""

    def __init__(self, url: str, timeout_s: float = 5.0, opener: Opener = urllib.request.urlopen) -> None:
        self.url = url.rstrip("/")
        self.timeout_s = timeout_s
        self._open = opener
        self._lock = threading.Lock()
        self._traffic = Traffic()

    @property
    def traffic(self) -> Traffic:
        return self._traffic

    def query(self, promql: str, at: float) -> list[Sample]:
        data = self._call("query", {"query": promql, "time": _api_time(at)})
        if not isinstance(data, dict) or data.get("resultType") != "vector":
            raise PrometheusError(f"expected a vector from {promql!r}, got {data.get('resultType')!r}", "refused")
        return [
            Sample(_labels(item), float(item["value"][0]), _api_float(item["value"][1]))
            for item in data.get("result", [])
        ]

    def query_range(self, promql: str, start: float, end: float, step_s: float) -> list[RangeSeries]:
        params = {"query": promql, "start": _api_time(start), "end": _api_time(end), "step": f"{step_s:g}"}
        data = self._call("query_range", params)
        if not isinstance(data, dict) or data.get("resultType") != "matrix":
            raise PrometheusError(f"expected a matrix from {promql!r}, got {data.get('resultType')!r}", "refused")
        return [
            RangeSeries(_labels(item), tuple((float(t), _api_float(v)) for t, v in item.get("values", [])))
            for item in data.get("result", [])
        ]

    def label_values(self, label: str, match: str, start: float, end: float) -> list[str]:
        """The values ``label`` takes in the series ``match`` selects between ``start`` and ``end`` (the index only)."""
        params = {"match[]": match, "start": _api_time(start), "end": _api_time(end)}
        data = self._call(f"label/{urllib.parse.quote(label)}/values", params, post=False)
        return [str(value) for value in data] if isinstance(data, list) else []

    def _call(self, endpoint: str, params: Mapping[str, str], post: bool = True) -> Any:
        # Prometheus stops evaluating at its own timeout too, so a slow query does not keep it busy.
        # In plain seconds: its duration syntax ("5s", "500ms") refuses fractions such as "5.68s".
        form = urllib.parse.urlencode({**params, "timeout": f"{self.timeout_s:g}"})
        url = f"{self.url}/api/v1/{endpoint}"
        request = urllib.request.Request(
            url if post else f"{url}?{form}",
            data=form.encode() if post else None,
            headers={
                **({"Content-Type": "application/x-www-form-urlencoded"} if post else {}),
                "Accept": "application/json",
                "Accept-Encoding": "gzip",
            },
        )
        try:
            with self._open(request, timeout=self.timeout_s) as response:
                raw = response.read()
                compressed = response.headers.get("Content-Encoding") == "gzip"
        except urllib.error.HTTPError as error:
            raise _http_error(error) from None
        except urllib.error.URLError as error:
            if isinstance(error.reason, TimeoutError):
                raise self._too_slow() from None
            raise PrometheusError(_reason(error.reason), "unreachable") from None
        except TimeoutError:
            raise self._too_slow() from None
        except OSError as error:
            raise PrometheusError(_reason(error), "unreachable") from None
        with self._lock:
            self._traffic = Traffic(self._traffic.requests + 1, self._traffic.bytes_received + len(raw))
        document = _decode(_gunzip(raw) if compressed else raw)
        if document is None or document.get("status") != "success" or not isinstance(document.get("data"), dict | list):
            raise PrometheusError("the answer is not from a Prometheus query API", "unreachable")
        return document["data"]


    def _too_slow(self) -> PrometheusError:
        return PrometheusError(f"no answer within {self.timeout_s:g}s", "slow")


def _gunzip(raw: bytes) -> bytes:
    try:
        return gzip.decompress(raw)
    except (OSError, EOFError):
        return b""


def _reason(error: object) -> str:
    if isinstance(error, OSError) and error.strerror:
        return error.strerror[0].lower() + error.strerror[1:]
    return str(error)


def _decode(raw: bytes) -> dict[str, Any] | None:
    try:
        document = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return None
    return document if isinstance(document, dict) else None


def _http_error(error: urllib.error.HTTPError) -> PrometheusError:
    try:
        raw = error.read()
    except OSError:
        raw = b""
    compressed = error.headers is not None and error.headers.get("Content-Encoding") == "gzip"
    document = _decode(_gunzip(raw) if compressed else raw)
    if document is not None and document.get("status") == "error":
        kind = document.get("errorType", "error")
        message = f"{kind}: {document.get('error', '')}".strip()
        return PrometheusError(message, "slow" if kind == "timeout" else "refused")
    return PrometheusError(f"HTTP {error.code} {error.reason}", "unreachable")


def _api_time(at: float) -> str:
    return f"{at:.3f}"


def _api_float(text: Any) -> float:
    return float(text)


def _labels(item: Mapping[str, Any]) -> Labels:
    # Prometheus' label names and values are JSON strings: the decoded object is used as it is
    # (a refresh at 1,000 hosts holds some 25,000 of them).
    metric = item.get("metric")
    return metric if isinstance(metric, dict) else {}


def promql_string(text: str) -> str:
    """A PromQL double-quoted string literal holding exactly ``text``."""
    # JSON's escapes (\\, \", \n, \uXXXX) are all Go escapes, which PromQL strings use.
    return json.dumps(text, ensure_ascii=False)
