"""ix_units_free keyed on `id + 0`, the claim's order, so no planner walks the primary key

Revision ID: 0007
Revises: 0006
"""

import sqlalchemy as sa
from alembic import op

revision = '0007'
down_revision = '0006'
branch_labels = None
depends_on = None

_FREE = sa.text("status = 'launched'")


def upgrade() -> None:
    op.drop_index('ix_units_free', table_name='units')
    op.create_index('ix_units_free', 'units', ['task_run_id', 'pool', sa.text('(id + 0)')],
                    postgresql_where=_FREE, sqlite_where=_FREE)


def downgrade() -> None:
    op.drop_index('ix_units_free', table_name='units')
    op.create_index('ix_units_free', 'units', ['task_run_id', 'pool', 'id'],
                    postgresql_where=_FREE, sqlite_where=_FREE)
