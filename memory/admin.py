from django.contrib import admin

from memory.models import UserMemory


@admin.register(UserMemory)
class UserMemoryAdmin(admin.ModelAdmin):
    list_display = ["user", "memory_type", "content", "access_count", "invalidated_at", "created_at"]
    list_filter = ["memory_type"]
    search_fields = ["content", "user__username"]
