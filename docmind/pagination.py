"""The API's page-numbered lists: `?page=N` and, within a bound, `?page_size=N`."""
from __future__ import annotations

from django.conf import settings
from django.utils.translation import gettext as _
from drf_spectacular.utils import OpenApiParameter
from rest_framework.exceptions import ValidationError
from rest_framework.pagination import PageNumberPagination

# The most rows one page may hold: a script listing a folder's hundreds of documents asks for few pages, and no
# request reads a table whole.
MAX_PAGE_SIZE = 500
PAGE_SIZE = "page_size"


class Pagination(PageNumberPagination):
    """DRF's page numbers (REST_FRAMEWORK["PAGE_SIZE"] rows unless `page_size` says otherwise); a `page_size` above
    MAX_PAGE_SIZE gives MAX_PAGE_SIZE rows, and one that is not a whole number from 1 is a 400 naming it (DRF would
    quietly use the default, and the caller would not learn that its page size was not read)."""

    page_size_query_param = PAGE_SIZE
    max_page_size = MAX_PAGE_SIZE

    def get_schema_operation_parameters(self, view):
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            if parameter["name"] == self.page_size_query_param:
                parameter["schema"] = {**parameter["schema"], "minimum": 1}
        return parameters

    def get_page_size(self, request):
        raw = request.query_params.getlist(self.page_size_query_param)
        if raw and not all(value.isascii() and value.isdigit() and int(value) >= 1 for value in raw):
            raise ValidationError({self.page_size_query_param: [_("Must be a whole number from 1.")]})
        return super().get_page_size(request)


def page_parameters(default_size: int | None = None) -> list[OpenApiParameter]:
    """The two query parameters of a paginated list, for its schema; `default_size`: the list's own page size,
    when it is not REST_FRAMEWORK["PAGE_SIZE"]."""
    default_size = default_size or settings.REST_FRAMEWORK["PAGE_SIZE"]
    return [OpenApiParameter("page", int, description="page number, from 1"),
            OpenApiParameter(PAGE_SIZE, {"type": "integer", "minimum": 1},
                             description=f"rows a page (default {default_size}, at most {MAX_PAGE_SIZE})")]
