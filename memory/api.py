"""/api/memories/: the caller's own active memories; deleting one invalidates it (soft delete)."""
from __future__ import annotations

from django.utils import timezone
from rest_framework import mixins, serializers, viewsets

from memory.models import UserMemory


class UserMemorySerializer(serializers.ModelSerializer):
    class Meta:
        model = UserMemory
        fields = ["id", "memory_type", "content", "access_count", "created_at", "updated_at"]
        read_only_fields = fields


class UserMemoryViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, mixins.DestroyModelMixin,
                        viewsets.GenericViewSet):
    serializer_class = UserMemorySerializer

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):  # schema generation has no signed-in user
            return UserMemory.objects.none()
        # Another user's id is simply not found (404), never a 403 that confirms it exists.
        return UserMemory.objects.filter(user=self.request.user, invalidated_at__isnull=True)

    def perform_destroy(self, instance: UserMemory) -> None:
        instance.invalidated_at = timezone.now()
        instance.save(update_fields=["invalidated_at", "updated_at"])
