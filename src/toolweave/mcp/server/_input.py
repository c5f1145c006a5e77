"""How a tool's questions to the client (elicitation, sampling, roots) reach it, in each era.

A 2025-11-25 session sends a real server-to-client request and waits for the answer. A 2026-07-28
request cannot: there is no channel back (SEP-2322, multi-round-trip requests). The call instead
ends with an *input-required result*: the questions under `inputRequests` (keyed by names the
client answers under) and a signed `requestState`; the client retries the same call with
`inputResponses` and the state, and the tool runs again from the start, this time finding its
answers. Asking several questions at once (`asyncio.gather(ctx.elicit(...), ctx.sample(...))`)
puts them all in one round, since each registers its question before the call ends.

The state is the server's memory held by the client, so it is sealed with an HMAC under a key
only the server knows and bound to who asked (the authenticated principal), what was called (the
method and the tool or prompt), a digest of the arguments and an expiry; each state is accepted
once. A tampered, foreign, expired or replayed state is refused with -32602 before the tool runs.
Replicas behind one balancer share the key (`state_key`) and the record of spent states
(`spent=`, a `SpentStates` such as `PostgresSpentStates`), so a state is accepted once by the
whole fleet.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import json
import secrets
import time
from collections import OrderedDict
from typing import TYPE_CHECKING, Any, Protocol

from toolweave.mcp.shared.errors import INVALID_PARAMS, InputRequired, JSONRPCError
from toolweave.tools.calls import CallRounds

if TYPE_CHECKING:
    from toolweave.mcp.shared.jsonrpc import RequestContext

#: Default seconds a `requestState` stays valid (`request_state_ttl`): time for a person to answer.
DEFAULT_REQUEST_STATE_TTL = 600.0
#: Most spent states remembered to refuse replays (`max_spent_states`); the oldest go first.
DEFAULT_MAX_SPENT_STATES = 10_000
_REPLAYED = "it was already used; a requestState is accepted once"
_KEY_PREFIX = {"elicitation/create": "elicitation", "sampling/createMessage": "sampling"}


class InputChannel(Protocol):
    """Where `ctx.elicit` / `ctx.sample` / `ctx.list_roots` send their question."""

    async def ask(
        self, key: str, method: str, params: dict[str, Any], timeout: float
    ) -> dict[str, Any]: ...


class SpentStates(Protocol):
    """The once-only record of `requestState` nonces, shared by replicas."""

    async def spend(self, nonce: str, expires: float) -> bool:
        """Record `nonce` (kept until `expires`); False when it was already spent."""
        ...


class SessionInputs:
    """2025-11-25: a real request to the client on the session, answered on the same stream."""

    def __init__(self, request: RequestContext) -> None:
        self._request = request

    async def ask(
        self, key: str, method: str, params: dict[str, Any], timeout: float
    ) -> dict[str, Any]:
        return await self._request.request(method, params, timeout=timeout)


class RetryInputs:
    """2026-07-28: the answers the retry carried, or an `InputRequired` naming what is missing.
    `rounds` is the call's round record: a retry continues the call its state names."""

    def __init__(
        self, answers: dict[str, Any] | None = None, rounds: CallRounds | None = None
    ) -> None:
        self.answers: dict[str, Any] = dict(answers or {})
        self.pending: dict[str, dict[str, Any]] = {}
        self.rounds = rounds if rounds is not None else CallRounds()

    async def ask(
        self, key: str, method: str, params: dict[str, Any], timeout: float
    ) -> dict[str, Any]:
        if key in self.answers:
            answer: dict[str, Any] = self.answers[key]
            return answer
        self.pending[key] = {"method": method, "params": params}
        self.rounds.paused = True
        await asyncio.sleep(0)  # let questions asked alongside (asyncio.gather) register too
        raise InputRequired(dict(self.pending))


def input_key(method: str, counter: int) -> str:
    """The default name of a tool's `counter`-th question: stable across the call's reruns."""
    return f"{_KEY_PREFIX.get(method, method.split('/')[0])}-{counter}"


def arguments_digest(arguments: Any) -> str:
    canonical = json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class RequestStates:
    """Seals and opens `requestState` tokens: `<payload>.<hmac>`, both base64url."""

    def __init__(
        self,
        key: bytes | None = None,
        *,
        ttl: float = DEFAULT_REQUEST_STATE_TTL,
        max_spent: int = DEFAULT_MAX_SPENT_STATES,
        spent: SpentStates | None = None,
    ) -> None:
        if key is not None and len(key) < 16:
            raise ValueError("state_key must be at least 16 bytes (32 random bytes recommended)")
        if ttl <= 0 or max_spent < 1:
            raise ValueError("request_state_ttl must be > 0 and max_spent_states >= 1")
        self._key = key if key is not None else secrets.token_bytes(32)
        self.ttl = ttl
        self.max_spent = max_spent
        self._spent: OrderedDict[str, float] = OrderedDict()
        #: Where spent nonces are recorded across replicas (None: in this process).
        self.spent = spent

    def _mac(self, payload: str) -> str:
        return _b64(hmac.new(self._key, payload.encode(), hashlib.sha256).digest())

    def seal(
        self,
        *,
        caller: str,
        target: str,
        digest: str,
        answers: dict[str, Any],
        asked: list[str],
        memo: dict[str, Any] | None = None,
    ) -> str:
        body = {
            "c": caller,
            "t": target,
            "d": digest,
            "x": time.time() + self.ttl,
            "n": secrets.token_hex(12),
            "a": answers,
            "q": asked,
            "m": memo or {},
        }
        payload = _b64(json.dumps(body, separators=(",", ":")).encode())
        return f"{payload}.{self._mac(payload)}"

    async def open(
        self, token: Any, *, caller: str, target: str, digest: str
    ) -> tuple[dict[str, Any], list[str], dict[str, Any]]:
        """The answers gathered so far, the keys the last round asked and the call's memo
        (`CallRounds.memo`); -32602 when refused."""
        if not isinstance(token, str) or token.count(".") != 1:
            raise _refused("it is not a requestState this server issued")
        payload, mac = token.split(".")
        if not hmac.compare_digest(mac, self._mac(payload)):
            raise _refused("its integrity check failed (it was altered or is not from this server)")
        try:
            body = json.loads(_unb64(payload))
        except ValueError:
            raise _refused("it is not a requestState this server issued") from None
        now = time.time()
        if body["c"] != caller or body["t"] != target or body["d"] != digest:
            raise _refused("it belongs to another caller, tool or set of arguments")
        if body["x"] < now:
            raise _refused("it expired; call again without requestState to start over")
        if self.spent is not None:
            if not await self.spent.spend(body["n"], body["x"]):
                raise _refused(_REPLAYED)
            return dict(body["a"]), list(body["q"]), dict(body.get("m") or {})
        for nonce, expires in list(self._spent.items()):
            if expires >= now:
                break
            del self._spent[nonce]
        if body["n"] in self._spent:
            raise _refused(_REPLAYED)
        self._spent[body["n"]] = body["x"]
        while len(self._spent) > self.max_spent:
            self._spent.popitem(last=False)
        return dict(body["a"]), list(body["q"]), dict(body.get("m") or {})


def _refused(why: str) -> JSONRPCError:
    return JSONRPCError(INVALID_PARAMS, f"requestState refused: {why}")


async def retry_inputs(
    states: RequestStates, params: dict[str, Any], *, caller: str, target: str, digest: str
) -> RetryInputs:
    """The answers a retried 2026-07-28 call brings: its `inputResponses` (checked) joined to
    those its `requestState` carries from earlier rounds; keys nobody asked for are ignored.
    Answers come only with a state: without one nothing was asked, so they are refused."""
    responses: Any = params.get("inputResponses", {})
    if not isinstance(responses, dict):
        raise JSONRPCError(
            INVALID_PARAMS,
            "params.inputResponses must be an object mapping each inputRequests key to the "
            "client's result for it",
        )
    for key, value in responses.items():
        if not isinstance(value, dict):
            raise JSONRPCError(
                INVALID_PARAMS,
                f"params.inputResponses[{key!r}] must be the result object of the request it "
                f"answers (e.g. {{'action': 'accept', 'content': {{...}}}}), not {value!r}",
            )
    if "requestState" not in params:
        if "inputResponses" in params:
            raise JSONRPCError(
                INVALID_PARAMS,
                "params.inputResponses came without params.requestState: answers are taken only "
                "in a retry of an input-required result; send its requestState back with them, "
                "or call without inputResponses",
            )
        return RetryInputs()
    answers, asked, memo = await states.open(
        params["requestState"], caller=caller, target=target, digest=digest
    )
    answers.update({key: responses[key] for key in asked if key in responses})
    return RetryInputs(answers, CallRounds(continued=True, memo=memo))


def input_required_result(
    states: RequestStates, inputs: RetryInputs, *, caller: str, target: str, digest: str
) -> dict[str, Any]:
    state = states.seal(
        caller=caller,
        target=target,
        digest=digest,
        answers=inputs.answers,
        asked=list(inputs.pending),
        memo=inputs.rounds.memo,
    )
    return {
        "resultType": "input_required",
        "inputRequests": dict(inputs.pending),
        "requestState": state,
    }
