"""The two query endpoints of the Prometheus HTTP API, through ``urllib``."""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

Labels = Mapping[str, str]


class PrometheusError(Exception):
    """Prometheus could not answer; ``unreachable`` tells a dead link from a refused query."""

    def __init__(self, message: str, unreachable: bool) -> None:
        super().__init__(message)
        self.unreachable = unreachable


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
        self._timeout_s = timeout_s
        self._open = opener

    def query(self, promql: str, at: float) -> list[Sample]:
        data = self._call("query", {"query": promql, "time": _api_time(at)})
        if data.get("resultType") != "vector":
            raise PrometheusError(f"expected a vector from {promql!r}, got {data.get('resultType')!r}", False)
        return [
            Sample(_labels(item), float(item["value"][0]), _api_float(item["value"][1]))
            for item in data.get("result", [])
        ]

    def query_range(self, promql: str, start: float, end: float, step_s: float) -> list[RangeSeries]:
        params = {"query": promql, "start": _api_time(start), "end": _api_time(end), "step": f"{step_s:g}"}
        data = self._call("query_range", params)
        if data.get("resultType") != "matrix":
            raise PrometheusError(f"expected a matrix from {promql!r}, got {data.get('resultType')!r}", False)
        return [
            RangeSeries(_labels(item), tuple((float(t), _api_float(v)) for t, v in item.get("values", [])))
            for item in data.get("result", [])
        ]

    def _call(self, endpoint: str, params: Mapping[str, str]) -> dict[str, Any]:
        body = urllib.parse.urlencode(params).encode()
        request = urllib.request.Request(
            f"{self.url}/api/v1/{endpoint}",
            data=body,
            headers={"Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"},
        )
        try:
            with self._open(request, timeout=self._timeout_s) as response:
                raw = response.read()
        except urllib.error.HTTPError as error:
            raise _http_error(error) from None
        except urllib.error.URLError as error:
            raise PrometheusError(_reason(error.reason), True) from None
        except TimeoutError:
            raise PrometheusError(f"no answer within {self._timeout_s:g}s", True) from None
        except OSError as error:
            raise PrometheusError(_reason(error), True) from None
        document = _decode(raw)
        if document is None or document.get("status") != "success" or not isinstance(document.get("data"), dict):
            raise PrometheusError("the answer is not from a Prometheus query API", True)
        data: dict[str, Any] = document["data"]
        return data


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
        document = _decode(error.read())
    except OSError:
        document = None
    if document is not None and document.get("status") == "error":
        kind = document.get("errorType", "error")
        return PrometheusError(f"{kind}: {document.get('error', '')}".strip(), False)
    return PrometheusError(f"HTTP {error.code} {error.reason}", True)


def _api_time(at: float) -> str:
    return f"{at:.3f}"


def _api_float(text: Any) -> float:
    return float(text)


def _labels(item: Mapping[str, Any]) -> dict[str, str]:
    metric = item.get("metric", {})
    return {str(k): str(v) for k, v in metric.items()}


def promql_string(text: str) -> str:
    """A PromQL double-quoted string literal holding exactly ``text``."""
    # JSON's escapes (\\, \", \n, \uXXXX) are all Go escapes, which PromQL strings use.
    return json.dumps(text, ensure_ascii=False)
