"""Admin for the API's service tokens: staff make one for each judge or game server.

The token is generated on save and shown once in a message; only its hash is stored, so a lost
token is revoked (untick Active) and replaced, never recovered.
"""

from django.contrib import admin, messages
from django.http import HttpRequest

from . import tokens
from .models import ServiceToken


@admin.register(ServiceToken)
class ServiceTokenAdmin(admin.ModelAdmin):
    list_display = ["name", "active", "created_by", "created_at", "last_used_at"]
    list_filter = ["active"]
    search_fields = ["name"]
    fields = ["name", "active", "created_by", "created_at", "last_used_at"]
    readonly_fields = ["created_by", "created_at", "last_used_at"]

    def save_model(self, request: HttpRequest, obj: ServiceToken, form, change: bool) -> None:
        if change:
            super().save_model(request, obj, form, change)
            return
        token, obj.token_hash = tokens.service_token_generate()
        obj.created_by = request.user
        super().save_model(request, obj, form, change)
        messages.warning(
            request,
            f"The token for “{obj.name}” is {token} — copy it now: it is shown only this once.",
        )
