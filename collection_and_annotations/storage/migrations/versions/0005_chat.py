"""live chat: conversations and their messages (the unused messages table is replaced)

Revision ID: 0005
Revises: 0004
"""

import sqlalchemy as sa
from alembic import op

revision = '0005'
down_revision = '0004'
branch_labels = None
depends_on = None


def upgrade() -> None:
    # The old table was never written (live chat did not exist before this revision).
    with op.batch_alter_table('messages') as batch:
        batch.drop_index('ix_messages_unit_id')
    op.drop_table('messages')
    op.create_table(
        'conversations',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('unit_id', sa.Integer(), sa.ForeignKey('units.id'), nullable=False),
        sa.Column('worker_id', sa.Integer(), sa.ForeignKey('workers.id'), nullable=False),
        sa.Column('attempt', sa.Integer(), nullable=False),
        sa.Column('position', sa.Integer(), nullable=False),
        sa.Column('bot', sa.String(length=200), nullable=False),
        sa.Column('status', sa.String(length=16), nullable=False),
        sa.Column('awaiting', sa.String(length=16), nullable=False),
        sa.Column('turns_done', sa.Integer(), nullable=False),
        sa.Column('respond_by', sa.DateTime(), nullable=True),
        sa.Column('error', sa.JSON(), nullable=True),
        sa.Column('started_at', sa.DateTime(), nullable=False),
        sa.Column('ended_at', sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('unit_id', 'attempt', 'position'),
    )
    op.create_index('ix_conversations_unit_id', 'conversations', ['unit_id'])
    op.create_index('ix_conversations_worker_id', 'conversations', ['worker_id'])
    op.create_table(
        'messages',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('conversation_id', sa.Integer(), sa.ForeignKey('conversations.id'),
                  nullable=False),
        sa.Column('index', sa.Integer(), nullable=False),
        sa.Column('role', sa.String(length=8), nullable=False),
        sa.Column('text', sa.Text(), nullable=False),
        sa.Column('sent_at', sa.DateTime(), nullable=False),
        sa.Column('bot', sa.String(length=200), nullable=True),
        sa.Column('settings', sa.JSON(), nullable=True),
        sa.Column('first_piece_ms', sa.Integer(), nullable=True),
        sa.Column('latency_ms', sa.Integer(), nullable=True),
        sa.Column('client_message_id', sa.String(length=64), nullable=True),
        sa.Column('opener', sa.Boolean(), nullable=False, server_default=sa.false()),
        sa.Column('labels', sa.JSON(), nullable=True),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('conversation_id', 'index'),
    )
    op.create_index('ix_messages_conversation_id', 'messages', ['conversation_id'])


def downgrade() -> None:
    op.drop_table('messages')
    op.drop_table('conversations')
    op.create_table(
        'messages',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('unit_id', sa.Integer(), sa.ForeignKey('units.id'), nullable=False),
        sa.Column('sender', sa.String(length=64), nullable=False),
        sa.Column('text', sa.Text(), nullable=False),
        sa.Column('meta', sa.JSON(), nullable=False),
        sa.Column('created_at', sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint('id'),
    )
    op.create_index('ix_messages_unit_id', 'messages', ['unit_id'])
