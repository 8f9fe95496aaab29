"""The confirmation around one paying tool: hand-rolled MRTR over a state scheme and the books.

Round 1 works out what the call would pay and returns an `InputRequiredResult` with
the question and a state. Round 2 demands the state, redeems it (spending its nonce),
reads the answer strictly and only then pays. `send_payment` (direct shape) and
`execute_transfer` (handle shape) are two instances, differing in where the order
comes from: the call's arguments, or the transfer staged earlier.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping

import payment_question as q
from capabilities import require_form_elicitation
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ElicitRequest, ElicitRequestFormParams, ElicitResult, InputRequiredResult, InputResponse
from payment_book import Book, Order, Payment, Refused
from payment_states import Call, Scheme
from payment_webhook import Webhook

__all__ = ["Gate"]

log = logging.getLogger("mcp_payments_reference")


def event(kind: str, **fields: object) -> None:
    """One line per security event on stderr (stdout is the protocol); %r keeps it one line."""
    log.info("%s %s", kind, " ".join(f"{key}={value!r}" for key, value in fields.items()))


class Gate:
    def __init__(
        self,
        name: str,
        book: Book,
        scheme: Scheme,
        flaws: frozenset[str],
        webhook: Webhook | None,
        question: str = "inline",
    ) -> None:
        self.name = name
        self._question = question
        self._book = book
        self._scheme = scheme
        self._flaws = flaws
        self._webhook = webhook

    async def __call__(self, resolve: Callable[[], Order], ctx: Context) -> str | InputRequiredResult:
        """`resolve` says what this call would pay now (Refused if nothing: an unknown transfer)."""
        try:
            return await self._round(resolve, ctx)
        except (Refused, q.BadAnswer) as exc:
            event("refused", tool=self.name, reason=str(exc))
            raise ToolError(str(exc)) from None

    async def _round(self, resolve: Callable[[], Order], ctx: Context) -> str | InputRequiredResult:
        call = self._call(ctx)
        responses = ctx.input_responses
        if not responses:
            # A client that declared no form elicitation gets -32021, never a form it cannot show.
            if "elicits-without-capability" not in self._flaws:
                require_form_elicitation(ctx.client_capabilities)
            return await self._ask(resolve(), call)
        response = responses.get(q.ANSWER_KEY)
        if response is None:
            raise Refused(f"no answer under {q.ANSWER_KEY!r}, the only question this server asked")
        if ctx.request_state is None:  # the SDK also maps `requestState: null` to None
            if "stateless-answers" in self._flaws:
                order = resolve()
                return await self._act(order, order, response)  # FLAW stateless-answers
            raise Refused("an answer arrived without the question's requestState; nothing was paid")
        approved = await self._scheme.redeem(ctx.request_state, call)
        if "unsealed-state" in self._flaws:
            return await self._act(approved, approved, response)  # FLAW unsealed-state: paid as written
        return await self._act(resolve(), approved, response)

    def _call(self, ctx: Context) -> Call:
        # The wire arguments, extras included: the signature would drop an added `force`.
        params = ctx.request_context.params or {}
        arguments = params.get("arguments")
        return Call(self.name, arguments if isinstance(arguments, Mapping) else {})

    async def _ask(self, order: Order, call: Call) -> InputRequiredResult:
        shown = {"raw": "unescaped-memo" in self._flaws, "style": self._question, "flaws": self._flaws}
        if order.transfer_id is None:
            message = q.payment_question(order.recipient, order.amount_cents, order.memo, **shown)
        else:
            message = q.handle_question(
                order.transfer_id, order.recipient, order.amount_cents, order.memo, **shown
            )
        request = ElicitRequest(
            params=ElicitRequestFormParams(mode="form", message=message, requested_schema=q.FORM)
        )
        state = await self._scheme.mint(call, order)
        event("asked", tool=self.name, amount_cents=order.amount_cents)
        return InputRequiredResult(input_requests={q.ANSWER_KEY: request}, request_state=state)

    async def _act(self, current: Order, approved: Order, response: InputResponse) -> str:
        """Pay `approved` if the answer says yes and it is still what the call would pay."""
        if not isinstance(response, ElicitResult):
            raise Refused("the answer is not an elicitation result")
        action, content = response.action, response.content
        if action != "accept":
            if "decline-acts" not in self._flaws:
                event("not-confirmed", tool=self.name, action=action)
                return f"No payment was sent: the user chose {action}."
            # FLAW decline-acts: decline and cancel fall through to paying, the form unread.
        elif not q.approves(content):
            event("not-confirmed", tool=self.name, action="accept")
            return "No payment was sent: the form said not to."
        if current != approved:
            raise Refused("the payment is not the one the user was asked about")
        payment = self._pay(approved)
        event("paid", tool=self.name, id=payment.id, amount_cents=payment.amount_cents)
        if self._webhook is not None:
            await self._webhook.send(payment)
        return (
            f"Sent {payment.amount_cents} cents to {q.quoted(payment.recipient)} "
            f"(payment {q.quoted(payment.id)})."
        )

    def pay_unasked(self, order: Order) -> str:
        """Pay without a question (the allow-list flaw's path): the payment as the caller gave it."""
        payment = self._pay(order)
        event("paid", tool=self.name, id=payment.id, amount_cents=payment.amount_cents)
        return f"Sent {payment.amount_cents} cents to {q.quoted(payment.recipient)} (payment {q.quoted(payment.id)})."

    def _pay(self, order: Order) -> Payment:
        if order.transfer_id is None:
            return self._book.pay(order)
        return self._book.execute(order.transfer_id, order)
